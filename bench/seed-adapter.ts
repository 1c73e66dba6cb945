// The one place that knows the recordings service's create call, so the seeder follows its API.
import type { Principal } from '../src/permissions';
import type { Services } from '../src/services';
import type { CorpusRecording } from './corpus';

/** Creates one corpus recording through the service (inside the caller's writer transaction); returns its id. */
export function createRecording(_services: Services, _principal: Principal, _idempotencyKey: string, _rec: CorpusRecording): string {
  // Filled in when src/services/recordings.ts lands (issue 3 items 1-2).
  throw new Error('the recordings service does not exist yet; seeding needs it');
}
