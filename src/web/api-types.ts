// Response shapes of the JSON API as the app reads them (docs/decisions.md §3, §5, §7, §8).
import type { RecordingStatus, RecordingType } from './vocabulary';

export interface SessionInfo {
  account: { id: string; name: string };
  session: { expiresAt: number };
}

export interface Recording {
  id: string;
  type: RecordingType;
  title: string;
  transcript: string;
  summary: string;
  recordedAt: number;
  updatedAt: number;
  revision: number;
  status: RecordingStatus;
  pinned: boolean;
  deviceId?: string;
  externalId?: string;
}

export interface RecordingPage {
  recordings: Recording[];
  nextCursor: string | null;
}

export interface Device {
  id: string;
  name: string;
  model: 'ring' | 'pin' | 'pendant';
}

export type Inputs = Partial<Record<string, RecordingType>>;

export interface ApiKey {
  id: string;
  name: string;
  permissions: string[];
  integrationId: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface WebhookRules {
  prefix?: string;
  captureInput?: string;
  kind?: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  payloadMode: 'default' | 'text';
  rules: WebhookRules | null;
  status: 'active' | 'disabled';
  createdAt: number;
}

/** A row of GET /api/v1/webhooks/{id}/deliveries. */
export interface WebhookDelivery {
  id: string;
  recordingId: string | null;
  eventId: string;
  type: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A row of GET /api/v1/recordings/{id}/deliveries. */
export interface RecordingDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  type: string;
  trigger: 'event' | 'rule' | 'manual';
  revision: number;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
  createdAt: number;
  deliveredAt: number | null;
}

export interface CaptureEvaluation {
  webhookId: string;
  status: 'pending_transcription' | 'waiting_for_capture_input';
  createdAt: number;
  updatedAt: number;
}
