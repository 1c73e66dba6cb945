// A row of the recordings table and the values its CHECK constraints allow (schema.sql): the
// stores return it and the services build it, so it lives below both.

export const RECORDING_TYPES = ['clip', 'memo'] as const;
export type RecordingType = (typeof RECORDING_TYPES)[number];

export const RECORDING_STATUSES = ['pending', 'transcribing', 'ready', 'no_speech', 'failed'] as const;
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];

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
