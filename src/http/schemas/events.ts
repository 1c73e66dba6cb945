// The feed item (also the default webhook payload), shared by the v2 and v1 feeds.
import * as v from 'valibot';
import { Int, UnixMs } from './numbers';

export const EventSchema = v.object({
  id: v.string(),
  type: v.string(),
  recordingId: v.string(),
  revision: Int,
  createdAt: UnixMs,
});
