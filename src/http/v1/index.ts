// Every v1 operation, registered on the /api/v1 router. v1 reshapes requests and responses and
// calls the same services as v2.
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { registerTokens } from './tokens';
import { registerDevicesV1 } from './devices';
import { registerEventsV1 } from './events';
import { registerInputMappings } from './input-mappings';
import { registerRecordingReportsV1 } from './recordings-reports';
import { registerRecordingsV1 } from './recordings';
import { registerDeliveriesV1 } from './deliveries';
import { registerWebhooksV1 } from './webhooks';
import { registerWebhookLogV1 } from './webhook-log';

export function registerV1(r: ApiRouter, deps: HttpDeps): void {
  registerTokens(r, deps);
  registerDevicesV1(r, deps);
  registerInputMappings(r, deps);
  registerEventsV1(r, deps);
  registerRecordingsV1(r, deps);
  registerRecordingReportsV1(r, deps);
  registerWebhooksV1(r, deps);
  registerWebhookLogV1(r, deps);
  registerDeliveriesV1(r, deps);
}
