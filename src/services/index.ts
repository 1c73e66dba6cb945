// Builds every service from one Core. The HTTP layer and the CLI both call these; neither talks
// to SQL directly.
import type { Core } from '../context';
import type { Worker } from '../worker';
import { AuthService } from './auth';
import { DeviceSettingsService } from './device-settings';
import { DeviceService } from './devices';
import { EventService } from './events';
import { EventHub } from './event-stream';
import { CaptureEvaluationStore } from '../store/capture-evaluation-store';
import { ManualDeliveryService } from './manual-delivery';
import { Outbox } from './outbox';
import { RecordingService } from './recordings';
import { WebhookLogService } from './webhook-log';
import { createWebhookService } from './webhooks';

export function createServices(core: Core) {
  const auth = new AuthService(core);
  const devices = new DeviceService(core);
  const deviceSettings = new DeviceSettingsService(core, devices);
  const events = new EventService(core);
  const recordings = new RecordingService(core, events, deviceSettings);
  /** Background workers started by `serve` (the index merger; the delivery scheduler registers here). */
  const workers: Worker[] = [recordings.merger];
  const webhooks = createWebhookService(core, workers);
  const evaluations = new CaptureEvaluationStore(core.db);
  // What each event and change queues for webhooks, in the transaction of the change.
  const outbox = new Outbox(core, { webhooks: webhooks.store, deliveries: webhooks.deliveries, recordings: recordings.store, evaluations, events: events.store, nudge: webhooks.scheduler.nudge });
  events.onEvent((event) => outbox.onEvent(event));
  recordings.onChange((before, after) => outbox.onChange(before, after));
  const manualDelivery = new ManualDeliveryService(core, recordings, webhooks, outbox, evaluations, events.store);
  // A subscription's delivery log and test sends (v1 routes of the web app).
  const webhookLog = new WebhookLogService(core, webhooks, outbox);
  /** Live event streams; a worker so that shutdown ends them. */
  const eventHub = new EventHub(core, events);
  workers.push(eventHub);
  return { core, auth, devices, deviceSettings, events, recordings, workers, webhooks, outbox, manualDelivery, webhookLog, eventHub };
}

export type Services = ReturnType<typeof createServices>;
