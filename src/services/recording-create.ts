// The parts of a create that do not need the service: the new row, its sort-key slot and the
// replay rule of an earlier create (RecordingService.create runs them in its transaction).
import { AppError } from '../errors';
import { newTimeOrderedId } from '../ids';
import type { Principal } from '../permissions';
import type { RecordingStore } from '../store/recording-store';
import type { CreateInput } from './recording-input';
import { MAX_RECORDED_AT, SEQ_SLOTS, slotRange, type AudioRef, type RecordingRow } from './recording-model';

/** The row a create inserts (sort key found in `store`, see freeSlot). */
export function newRow(store: RecordingStore, principal: Principal, input: CreateInput, hash: string, now: number): RecordingRow {
  const audio: AudioRef[] = (input.audio ?? []).map((a) => ({ clientId: a.clientId, fileId: a.fileId, reportedAt: now }));
  const transcript = input.transcript ?? '';
  const native = principal.kind === 'session' && (input.deviceId !== undefined || input.captureInput !== undefined);
  const { recordedAt, seq } = freeSlot(store, input.recordedAt, now);
  return {
    seq,
    id: newTimeOrderedId('rec', now),
    account_id: principal.accountId,
    integration_id: principal.integrationId,
    type: input.type,
    title: input.title ?? '',
    transcript,
    summary: input.summary ?? '',
    recorded_at: recordedAt,
    created_at: now,
    updated_at: now,
    revision: 1,
    status: transcript !== '' ? 'ready' : (input.status ?? 'pending'),
    pinned: 0,
    device_id: input.deviceId ?? null,
    external_id: input.externalId ?? null,
    source: input.source ?? null,
    capture_input: input.captureInput ?? null,
    native: native ? 1 : 0,
    // A native capture without a transcript is metadata only: announced when the app saves it.
    text_saved: native && transcript === '' ? 0 : 1,
    processing_updated_at: null,
    processing_message: null,
    audio: JSON.stringify(audio),
    body_hash: hash,
    deleted_at: null,
  };
}

/**
 * The next free sort key of the capture millisecond (keys count down, see recording-model.ts).
 * A given recordedAt whose 1,024 keys are all used is refused; a defaulted one moves on by a
 * millisecond until there is room.
 */
function freeSlot(store: RecordingStore, given: number | undefined, now: number): { recordedAt: number; seq: number } {
  let recordedAt = given ?? now;
  for (let tries = 0; tries < 1000 && recordedAt <= MAX_RECORDED_AT; tries++, recordedAt++) {
    const [first, last] = slotRange(recordedAt);
    const used = store.firstUsed(first, last);
    if (used === null) return { recordedAt, seq: last };
    if (used > first) return { recordedAt, seq: used - 1 };
    if (given !== undefined) break;
  }
  throw new AppError('limit_reached', `recordedAt: ${SEQ_SLOTS} recordings already have this exact capture millisecond; use another recordedAt`);
}

/** The recording an earlier create made, answered again: 410 once deleted, 409 for another body. */
export function replay(row: RecordingRow, hash: string, via: 'Idempotency-Key' | 'externalId'): RecordingRow {
  if (row.deleted_at !== null) throw new AppError('gone', `the recording this ${via} created (${row.id}) was deleted`);
  if (row.body_hash !== hash) {
    const instead = via === 'externalId' ? 'another externalId' : 'a new Idempotency-Key';
    throw new AppError('idempotency_conflict', `${via} was already used with a different body (recording ${row.id}); use ${instead} for a new recording`);
  }
  return row;
}
