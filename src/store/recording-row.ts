// A row of the recordings table and the values its CHECK constraints allow (schema.sql): the
// stores return it and the services build it, so it lives below both.

export const RECORDING_TYPES = ['clip', 'memo'] as const;
export type RecordingType = (typeof RECORDING_TYPES)[number];

export const RECORDING_STATUSES = ['pending', 'transcribing', 'ready', 'no_speech', 'failed'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

/**
 * Every column of the recordings table in the table's order: what `SELECT *` returns, named, for
 * statements read through objectRows() (object-rows.ts says why a row's columns must be named), and
 * what a create inserts (recording-store.ts). test/store/object-rows.test.ts holds it to schema.sql.
 */
export const RECORDING_COLUMNS = [
  'pos', 'seq', 'id', 'account_id', 'integration_id', 'type', 'title', 'transcript', 'summary', 'recorded_at',
  'created_at', 'updated_at', 'revision', 'status', 'pinned', 'device_id', 'external_id', 'source', 'capture_input',
  'native', 'text_saved', 'processing_updated_at', 'processing_message', 'audio', 'body_hash', 'deleted_at',
] as const;

/** RECORDING_COLUMNS as a select list, each column qualified with `table` when given. */
export const recordingColumns = (table?: string): string => RECORDING_COLUMNS.map((c) => (table ? `${table}.${c}` : c)).join(', ');

/** A row of the recordings table (schema.sql). */
export interface RecordingRow {
  seq: number;
  id: string;
  account_id: string;
  integration_id: string;
  type: RecordingType;
  title: string;
  transcript: string;
  summary: string;
  recorded_at: number;
  created_at: number;
  updated_at: number;
  revision: number;
  status: RecordingStatus;
  pinned: number;
  device_id: string | null;
  external_id: string | null;
  source: string | null;
  capture_input: string | null;
  native: number;
  text_saved: number;
  processing_updated_at: number | null;
  processing_message: string | null;
  /** JSON array of AudioRef. */
  audio: string;
  body_hash: string;
  deleted_at: number | null;
}
