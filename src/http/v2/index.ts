// Every v2 resource, registered on the /api/v2 router.
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { registerApiKeys } from './api-keys';
import { registerDevices } from './devices';
import { registerEvents } from './events';
import { registerEventStream } from './event-stream';
import { registerRecordings } from './recordings';
import { registerWebhooks } from './webhooks';

export function registerV2(r: ApiRouter, deps: HttpDeps): void {
  registerApiKeys(r, deps);
  registerDevices(r, deps);
  registerEvents(r, deps);
  registerEventStream(r, deps);
  registerRecordings(r, deps);
  registerWebhooks(r, deps);
}
