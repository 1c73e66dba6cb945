// What a hash (#/recordings/rec_…) names: no DOM or Preact here, so the node tests read it as it is.
import { ID_PATTERN, MAX_ID_LENGTH, RECORDING_STATUSES, RECORDING_TYPES } from './vocabulary';

export type Route =
  /** `query`: what follows `?` in `#/?q=…` (the library's filters, libraryFilters). */
  | { page: 'library'; query: string }
  | { page: 'recording'; id: string }
  | { page: 'devices' }
  | { page: 'keys' }
  | { page: 'webhooks' }
  | { page: 'missing' };

export function parseRoute(hash: string): Route {
  const whole = hash.replace(/^#/, '') || '/';
  const mark = whole.indexOf('?');
  const path = mark < 0 ? whole : whole.slice(0, mark);
  if (path === '/') return { page: 'library', query: mark < 0 ? '' : whole.slice(mark + 1) };
  const rec = /^\/recordings\/([^/]+)$/.exec(path);
  if (rec) {
    try {
      return { page: 'recording', id: decodeURIComponent(rec[1]!) };
    } catch {
      return { page: 'missing' }; // a malformed escape (%E0%A4%A) names no recording
    }
  }
  if (path === '/devices') return { page: 'devices' };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/webhooks') return { page: 'webhooks' };
  return { page: 'missing' };
}

/** The library's search and filters, as the address carries them. */
export interface LibraryFilters {
  q: string;
  type: string;
  deviceId: string;
  status: string;
}

const MAX_Q = 200; // the API's bound on q

/** `s` cut to `max` UTF-16 units (the API counts string length so), never inside a character. */
function cut(s: string, max: number): string {
  let out = '';
  for (const ch of s) {
    if (out.length + ch.length > max) break;
    out += ch;
  }
  return out;
}

/**
 * `q=…&type=…&device=…&status=…` → the filters it names, or null when it names none (then the
 * library keeps the ones the person last used). A value the API would refuse (an unknown type or
 * status, a device id that no device can have) is dropped rather than shown as an error; q is cut
 * to the API's 200 characters.
 */
export function libraryFilters(query: string): LibraryFilters | null {
  const p = new URLSearchParams(query);
  const get = (name: string) => p.get(name) ?? '';
  if (!['q', 'type', 'device', 'status'].some((name) => p.has(name))) return null;
  const type = get('type');
  const status = get('status');
  const device = get('device');
  return {
    q: cut(get('q'), MAX_Q),
    type: (RECORDING_TYPES as readonly string[]).includes(type) ? type : '',
    deviceId: device.length <= MAX_ID_LENGTH && ID_PATTERN.test(device) ? device : '',
    status: (RECORDING_STATUSES as readonly string[]).includes(status) ? status : '',
  };
}

/** The library's address for `f`: `#/` without filters, else `#/?q=…` with only those set. */
export function libraryHash(f: LibraryFilters): string {
  const p = new URLSearchParams();
  if (f.q !== '') p.set('q', f.q);
  if (f.type !== '') p.set('type', f.type);
  if (f.deviceId !== '') p.set('device', f.deviceId);
  if (f.status !== '') p.set('status', f.status);
  const query = p.toString();
  return query === '' ? '#/' : `#/?${query}`;
}
