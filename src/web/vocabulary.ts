// The API's fixed names that the app offers as choices. The permission list is the server's own
// module (it imports nothing); the rest are copies of constants in service modules that pull in
// SQLite code, which must not reach the browser bundle: test/web/vocabulary.test.ts keeps them
// equal to the originals.
export { PERMISSIONS } from '../permissions';

export const EVENT_TYPES = ['recording.created', 'recording.updated', 'recording.transcript_ready', 'recording.deleted'] as const;

export const INPUT_NAMES = ['hold', 'doubleTap', 'tripleTap', 'recordButton', 'appRecord'] as const;

export const RECORDING_TYPES = ['clip', 'memo'] as const;

export const RECORDING_STATUSES = ['pending', 'transcribing', 'ready', 'no_speech', 'failed'] as const;

/** What a device id (any reference id) may look like, and its most characters (src/ids.ts, src/http/schemas.ts Id). */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const MAX_ID_LENGTH = 256;

export type RecordingType = (typeof RECORDING_TYPES)[number];
export type RecordingStatus = (typeof RECORDING_STATUSES)[number];
export type InputName = (typeof INPUT_NAMES)[number];

/** How an input name reads in a form ("doubleTap" → "Double tap"). */
export const inputLabel = (name: string): string =>
  name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`).replace(/^./, (c) => c.toUpperCase());

export const statusLabel = (status: string): string => status.replace(/_/g, ' ');
