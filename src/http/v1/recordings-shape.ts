// The v1 recording (docs/decisions.md §7): the v2 fields with `kind` for `type`, plus the capture metadata
// (`source`, `captureInput`), the client's processing report and the local audio references with
// the time each was reported. One mapping from the stored row, next to v2's recordingJson.
import * as v from 'valibot';
import { can, type Principal } from '../../permissions';
import { RECORDING_TYPES, type RecordingType } from '../../services/device-inputs';
import {
  audioRefs,
  RECORDING_STATUSES,
  recordingJson,
  recordingRef,
  type RecordingJson,
  type RecordingRow,
  type RecordingStatus,
} from '../../services/recording-model';
import { RecordingSchema } from '../schemas/recordings';
import { Int, UnixMs } from '../schemas/numbers';

export type RecordingV1Json = Omit<RecordingJson, 'type'> & {
  kind: RecordingType;
  source?: string;
  captureInput?: string;
  processing: { status: RecordingStatus; updatedAt: number; message?: string };
  audioAssets: Array<{ clientId: string; fileId: string; reportedAt: number }>;
};

/** The v2 recording of the row, reshaped: one mapping of the shared fields for both versions. */
export function recordingV1Json(row: RecordingRow): RecordingV1Json {
  const { id, type, ...shared } = recordingJson(row);
  const json: RecordingV1Json = {
    id,
    kind: type,
    ...shared,
    processing: { status: row.status, updatedAt: row.processing_updated_at ?? row.created_at },
    audioAssets: audioRefs(row).map((a) => ({ clientId: a.clientId, fileId: a.fileId, reportedAt: a.reportedAt })),
  };
  if (row.source !== null) json.source = row.source;
  if (row.capture_input !== null) json.captureInput = row.capture_input;
  if (row.processing_message !== null) json.processing.message = row.processing_message;
  return json;
}

/** The full recording for readers; only id and revision for callers without recordings:read. */
export const writtenV1 = (principal: Principal, row: RecordingRow) => ({
  recording: can(principal, 'recordings:read') ? recordingV1Json(row) : recordingRef(row),
});

const Status = v.picklist(RECORDING_STATUSES);

export const RecordingV1Schema = v.object({
  id: v.string(),
  kind: v.picklist(RECORDING_TYPES),
  ...v.omit(RecordingSchema, ['id', 'type']).entries,
  source: v.optional(v.string()),
  captureInput: v.optional(v.pipe(v.string(), v.description('The input that started the capture; fixed once set'))),
  processing: v.pipe(
    v.object({ status: Status, updatedAt: UnixMs, message: v.optional(v.string()) }),
    v.description("The client's last processing report (updatedAt: when it last changed; the creation time before any report)"),
  ),
  audioAssets: v.pipe(
    v.array(v.object({ clientId: v.string(), fileId: v.string(), reportedAt: UnixMs })),
    v.description('Local audio references of a memo, each with the time it was first reported available; always [] for a clip'),
  ),
});

const RefSchema = v.pipe(v.object({ id: v.string(), revision: Int }), v.description('Callers without recordings:read'));
export const RecordingV1Response = v.object({ recording: v.union([RecordingV1Schema, RefSchema]) });
