// The library's search box and filters. The search box has role searchbox and the name Search.
import type { Device } from './api-types';
import type { LibraryFilters } from './route-parse';
import { RECORDING_STATUSES, statusLabel } from './vocabulary';

/** The library's search and filters (the address carries them: route-parse.ts). */
export type Filters = LibraryFilters;

export const NO_FILTERS: Filters = { q: '', type: '', deviceId: '', status: '' };

export function LibraryFilters({ filters, devices, onChange }: { filters: Filters; devices: Device[]; onChange: (f: Filters) => void }) {
  const set = (patch: Partial<Filters>) => onChange({ ...filters, ...patch });
  // A device id from the address that the list lacks (not loaded yet, or no device of this account
  // has it) is offered by its id: the filter in use stays visible, and All devices takes it away.
  const unlisted = filters.deviceId !== '' && !devices.some((d) => d.id === filters.deviceId) ? filters.deviceId : undefined;
  return (
    <div class="filters">
      <label class="field search-field">
        <span class="visually-hidden">Search</span>
        <input
          id="search"
          type="search"
          placeholder="Search titles and transcripts   ( / )"
          maxLength={200}
          autoComplete="off"
          value={filters.q}
          onInput={(e) => set({ q: e.currentTarget.value })}
        />
      </label>
      <div class="filter-row">
        <label class="field compact">
          <span>Type</span>
          <select value={filters.type} onChange={(e) => set({ type: e.currentTarget.value })}>
            <option value="">All</option>
            <option value="clip">Clips</option>
            <option value="memo">Memos</option>
          </select>
        </label>
        {(devices.length > 0 || unlisted !== undefined) && (
          <label class="field compact">
            <span>Device</span>
            <select value={filters.deviceId} onChange={(e) => set({ deviceId: e.currentTarget.value })}>
              <option value="">All devices</option>
              {devices.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
              {unlisted !== undefined && <option value={unlisted}>{unlisted}</option>}
            </select>
          </label>
        )}
        <label class="field compact">
          <span>Status</span>
          <select value={filters.status} onChange={(e) => set({ status: e.currentTarget.value })}>
            <option value="">Any status</option>
            {RECORDING_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </label>
      </div>
    </div>
  );
}
