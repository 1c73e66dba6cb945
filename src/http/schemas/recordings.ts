// The v2 recording, as v2 answers it and as v1, MCP and the OpenAPI documents describe it.
import * as v from 'valibot';
import { RECORDING_TYPES } from '../../services/device-inputs';
import { RECORDING_STATUSES } from '../../services/recording-model';
import { Int, UnixMs } from './numbers';

export const RecordingSchema = v.object({
  id: v.string(),
  type: v.picklist(RECORDING_TYPES),
  title: v.string(),
  transcript: v.string(),
  summary: v.string(),
  recordedAt: UnixMs,
  updatedAt: UnixMs,
  revision: Int,
  status: v.picklist(RECORDING_STATUSES),
  pinned: v.boolean(),
  audio: v.array(v.object({ clientId: v.string(), fileId: v.string() })),
  deviceId: v.optional(v.string()),
  externalId: v.optional(v.string()),
});
