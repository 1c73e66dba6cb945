// The one place that knows the recordings service's create call, so the seeder follows its API.
import type { Principal } from '../src/permissions';
import type { Services } from '../src/services';
import type { CorpusRecording } from './corpus';

/** Creates one corpus recording through the service (inside the caller's writer transaction); returns its id. */
export function createRecording(services: Services, principal: Principal, idempotencyKey: string, rec: CorpusRecording): string {
  // deviceId is part of the service's input (the v1 create carries it); v2 bodies cannot set it.
  return services.recordings.create(principal, rec, idempotencyKey).row.id;
}
