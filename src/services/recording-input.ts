// Plain inputs of the recording writes (shared by v2 and the v1 layer) and the rules on them that
// do not depend on the stored row. HTTP schemas check types first; these checks hold for every
// caller, so a v1 route or the CLI cannot store what v2 would refuse.
import { invalid } from '../errors';
import { ID_PATTERN } from '../ids';
import type { RecordingType } from './device-inputs';
import { MAX_RECORDED_AT, RECORDING_STATUSES, type RecordingStatus } from './recording-model';

export interface AudioInput {
  clientId: string;
  fileId: string;
}

export interface CreateInput {
  type: RecordingType;
  title?: string | undefined;
  transcript?: string | undefined;
  summary?: string | undefined;
  /** Capture time, Unix ms, 0..MAX_RECORDED_AT; default: now. */
  recordedAt?: number | undefined;
  externalId?: string | undefined;
  audio?: AudioInput[] | undefined;
  /** v1 only: capture metadata and the client's status. */
  deviceId?: string | undefined;
  source?: string | undefined;
  captureInput?: string | undefined;
  status?: RecordingStatus | undefined;
}

/** The editable fields; anything else present in a patch is refused (immutable or unknown). */
export interface RecordingPatch {
  title?: string | undefined;
  transcript?: string | undefined;
  summary?: string | undefined;
  pinned?: boolean | undefined;
  [field: string]: unknown;
}

export const EDITABLE_FIELDS = ['title', 'transcript', 'summary', 'pinned'] as const;
export const IMMUTABLE_FIELDS = ['type', 'audio', 'recordedAt', 'externalId', 'deviceId'] as const;

export const MAX_AUDIO_REFS = 100;

// Audio references must not be paths or download URLs (docs/decisions.md §13: the service stores no audio). The id
// pattern already excludes slashes and backslashes, so paths and most URLs fail it. It lets through
// "scheme:rest" without a slash, which is also the shape of many honest opaque ids ("ios:F3A9",
// "rec-2024-05-01T10:00"). So the schemes that locate or fetch a file (or run script) are refused by
// name, as is a Windows drive letter ("C:a.m4a"); names (urn:, tel:) pass. Other ids (device,
// external, source) name things rather than files: the pattern alone applies to them, as to devices.
const URL_SCHEMES = [
  'http', 'https', 'ws', 'wss', 'file', 'content', 'data', 'blob', 'filesystem',
  'ftp', 'ftps', 'sftp', 'scp', 'tftp', 'ssh', 'smb', 'cifs', 'nfs', 'afp', 'dav', 'davs', 'webdav', 'webdavs',
  'rtsp', 'rtsps', 'rtmp', 'rtmps', 'rtp', 'mms', 'icecast', 'shoutcast',
  's3', 'gs', 'az', 'abfs', 'abfss', 'wasb', 'wasbs', 'hdfs', 'ipfs', 'ipns', 'magnet', 'git',
  'ph', 'assets-library', 'ipod-library', 'javascript', 'vbscript',
];
const URL_SCHEME = new RegExp(`^(?:[a-z]|${URL_SCHEMES.join('|')}):`, 'i');

export function checkOpaqueId(where: string, value: string): void {
  if (value.length < 1 || value.length > 256 || !ID_PATTERN.test(value)) {
    throw invalid(`${where}: must be an opaque id of 1-256 characters matching ${ID_PATTERN.source} (no paths, URLs or audio bytes)`);
  }
}

/** An id of an audio reference (clientId, fileId): opaque, and neither a URL nor a path. */
export function checkAudioId(where: string, value: string): void {
  checkOpaqueId(where, value);
  if (URL_SCHEME.test(value)) throw invalid(`${where}: must be an opaque id, not a URL or a path`);
}

export function checkRecordedAt(where: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_RECORDED_AT) {
    throw invalid(`${where}: must be a whole number of Unix milliseconds from 0 to ${MAX_RECORDED_AT} (year 2248)`);
  }
}

/** Audio references of a create: memos only, opaque ids, no duplicates. */
export function checkAudio(type: RecordingType, audio: AudioInput[] | undefined): AudioInput[] {
  if (audio === undefined || audio.length === 0) return [];
  if (type === 'clip') throw invalid('audio: a clip keeps no audio; audio references are accepted only for type memo');
  if (audio.length > MAX_AUDIO_REFS) throw invalid(`audio: at most ${MAX_AUDIO_REFS} references`);
  const seen = new Set<string>();
  audio.forEach((a, i) => {
    checkAudioId(`audio[${i}].clientId`, a.clientId);
    checkAudioId(`audio[${i}].fileId`, a.fileId);
    const key = `${a.clientId}\n${a.fileId}`;
    if (seen.has(key)) throw invalid(`audio[${i}]: the same reference is listed twice`);
    seen.add(key);
  });
  return audio;
}

export function checkCreateInput(input: CreateInput): void {
  if (input.type !== 'clip' && input.type !== 'memo') throw invalid('type: must be "clip" or "memo"');
  for (const f of ['title', 'transcript', 'summary'] as const) {
    if (input[f] !== undefined && typeof input[f] !== 'string') throw invalid(`${f}: must be a string`);
  }
  if (input.recordedAt !== undefined) checkRecordedAt('recordedAt', input.recordedAt);
  if (input.externalId !== undefined) checkOpaqueId('externalId', input.externalId);
  if (input.deviceId !== undefined) checkOpaqueId('deviceId', input.deviceId);
  if (input.source !== undefined) checkOpaqueId('source', input.source);
  if (input.captureInput !== undefined) checkOpaqueId('captureInput', input.captureInput);
  if (input.status !== undefined && !(RECORDING_STATUSES as readonly string[]).includes(input.status)) {
    throw invalid(`status: must be one of ${RECORDING_STATUSES.join(', ')}`);
  }
  checkAudio(input.type, input.audio);
}

/** 409 immutable_field for the first fixed field present; 400 for a field that is not a recording field. */
export function checkPatch(patch: RecordingPatch): void {
  for (const field of Object.keys(patch)) {
    if (patch[field] === undefined) continue;
    if ((IMMUTABLE_FIELDS as readonly string[]).includes(field)) continue;
    if (!(EDITABLE_FIELDS as readonly string[]).includes(field)) throw invalid(`${field}: unknown field; editable are ${EDITABLE_FIELDS.join(', ')}`);
  }
  for (const f of ['title', 'transcript', 'summary'] as const) {
    if (patch[f] !== undefined && typeof patch[f] !== 'string') throw invalid(`${f}: must be a string`);
  }
  if (patch.pinned !== undefined && typeof patch.pinned !== 'boolean') throw invalid('pinned: must be true or false');
}

export const immutableFieldIn = (patch: RecordingPatch): string | undefined => IMMUTABLE_FIELDS.find((f) => patch[f] !== undefined);
