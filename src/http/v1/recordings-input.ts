// Request schemas of the v1 recording operations (spec "v1 query constraints", docs/decisions.md §7).
// They validate and document at once; the service re-checks what holds for every caller.
import * as v from 'valibot';
import { INPUT_NAMES, RECORDING_TYPES } from '../../services/device-inputs';
import { PROCESSING_MOVES_TEXT } from '../../services/processing-status';
import { MAX_AUDIO_REFS } from '../../services/recording-input';
import { RECORDING_STATUSES } from '../../services/recording-model';
import { Id, queryInt, RecordedAt, RecordingsLimit } from '../schemas';

export const V1_IDEMPOTENCY_MAX = 128;

const Kind = v.picklist(RECORDING_TYPES, 'must be "clip" or "memo"');
const Status = v.picklist(RECORDING_STATUSES, `must be one of ${RECORDING_STATUSES.join(', ')}`);
const CaptureInput = v.pipe(
  v.picklist(INPUT_NAMES, `must be one of ${INPUT_NAMES.join(', ')}`),
  v.description('The device input that started the capture'),
);
const Bound = (what: string) => v.optional(v.pipe(queryInt(0, Number.MAX_SAFE_INTEGER), v.description(`${what} capture time, Unix ms, inclusive`)));

/** Filters shared by listRecordings and latestClip. */
const filters = {
  source: v.optional(Id),
  deviceId: v.optional(Id),
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200, 'must be at most 200 characters'),
      v.description('0-200 characters; every word must appear in the title or transcript (prefix, case- and accent-insensitive; "quotes" for a phrase). Empty: no text filter'),
    ),
  ),
  from: Bound('Earliest'),
  to: Bound('Latest'),
};

export const ListV1Query = v.strictObject({
  ...filters,
  kind: v.optional(Kind),
  status: v.optional(Status),
  cursor: v.optional(
    v.pipe(v.string(), v.maxLength(1024, 'must be at most 1024 characters'), v.description('nextCursor of the previous page (same filters); empty: the first page')),
  ),
  limit: RecordingsLimit,
});
export type ListV1 = v.InferOutput<typeof ListV1Query>;

export const LatestClipQuery = v.strictObject(filters);

const AudioRef = v.strictObject({ clientId: Id, fileId: Id });

export const CreateV1Body = v.strictObject({
  kind: v.pipe(Kind, v.description('Required. For an app capture with captureInput the input mapping decides and this value is overridden')),
  title: v.optional(v.string()),
  transcript: v.optional(v.pipe(v.string(), v.description('A nonempty transcript makes the status "ready"'))),
  summary: v.optional(v.string()),
  recordedAt: v.optional(RecordedAt),
  externalId: v.optional(Id),
  deviceId: v.optional(v.pipe(Id, v.description('The device that captured it; with a session this makes the create an app capture'))),
  source: v.optional(v.pipe(Id, v.description('Free label of the sending app or integration (a filter); alone it does not make an app capture'))),
  captureInput: v.optional(CaptureInput),
  status: v.optional(v.pipe(Status, v.description('Initial processing status without a transcript (default pending)'))),
  audio: v.optional(v.pipe(v.array(AudioRef), v.maxLength(MAX_AUDIO_REFS), v.description('Memo only: opaque local-file references { clientId, fileId }'))),
});

export const PutV1Body = v.strictObject({
  title: v.optional(v.string()),
  transcript: v.optional(v.pipe(v.string(), v.description('Saving a nonempty transcript makes the recording ready'))),
  summary: v.optional(v.string()),
  pinned: v.optional(v.boolean()),
  // Fixed fields, sent back as read: each must equal the stored value (else 409 immutable_field),
  // and a value no recording could have is a 400 first.
  kind: v.optional(Kind),
  recordedAt: v.optional(RecordedAt),
  externalId: v.optional(Id),
  deviceId: v.optional(Id),
  source: v.optional(Id),
  captureInput: v.optional(Id),
});

export const ProcessingBody = v.strictObject({
  status: v.pipe(Status, v.description(`Allowed moves: ${PROCESSING_MOVES_TEXT}; the same status again is allowed. Other moves: 409 not_editable`)),
  message: v.optional(v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters'))),
  captureInput: v.optional(v.pipe(CaptureInput, v.description('Capture metadata may arrive late; once set it is fixed (409 immutable_field)'))),
  deviceId: v.optional(v.pipe(Id, v.description('Capture metadata; once set it is fixed (409 immutable_field)'))),
});

export const AudioAssetBody = v.strictObject({
  clientId: v.pipe(Id, v.description('Opaque id of the client holding the file (no paths or URLs)')),
  fileId: v.pipe(Id, v.description("Opaque id of the file in that client's local store (no paths or URLs)")),
  available: v.optional(v.pipe(v.boolean(), v.description('false withdraws the reference; default true')), true),
});
