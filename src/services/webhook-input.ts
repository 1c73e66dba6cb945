// What a subscription may ask for (docs/decisions.md §18, §6). Shared by the v2
// and v1 routes and the CLI, so every entry point accepts exactly the same subscriptions.
import { invalid } from '../errors';
import { INPUT_NAMES, RECORDING_TYPES, type InputName, type RecordingType } from './device-inputs';
import { EVENT_TYPES, type EventType } from './events';

export const PAYLOAD_MODES = ['default', 'text'] as const;
export type PayloadMode = (typeof PAYLOAD_MODES)[number];

/** The simple (default payload) subscriptions; text mode also gets recording.transcript_ready. */
export const DEFAULT_MODE_EVENTS = ['recording.created', 'recording.updated', 'recording.deleted'] as const satisfies readonly EventType[];
export const RULE_EVENT: EventType = 'recording.transcript_ready';

export const MAX_URL_LENGTH = 2048;
export const MAX_PREFIX_LENGTH = 200;

/** Capture rules: every configured condition must match. */
export interface WebhookRules {
  prefix?: string;
  captureInput?: InputName;
  kind?: RecordingType;
}

export interface WebhookInput {
  url: string;
  events?: readonly string[] | undefined;
  payloadMode?: string | undefined;
  rules?: { prefix?: string | undefined; captureInput?: string | undefined; kind?: string | undefined } | null | undefined;
}

export interface ValidWebhookInput {
  url: string;
  events: EventType[];
  payloadMode: PayloadMode;
  rules: WebhookRules | null;
}

function validRules(raw: NonNullable<WebhookInput['rules']>): WebhookRules {
  const rules: WebhookRules = {};
  if (raw.prefix !== undefined) {
    if (raw.prefix.trim() === '') throw invalid('rules.prefix: must not be empty');
    if (raw.prefix.length > MAX_PREFIX_LENGTH) throw invalid(`rules.prefix: must be at most ${MAX_PREFIX_LENGTH} characters`);
    rules.prefix = raw.prefix;
  }
  if (raw.captureInput !== undefined) {
    if (!(INPUT_NAMES as readonly string[]).includes(raw.captureInput)) {
      throw invalid(`rules.captureInput: must be one of ${INPUT_NAMES.join(', ')}`);
    }
    rules.captureInput = raw.captureInput as InputName;
  }
  if (raw.kind !== undefined) {
    if (!(RECORDING_TYPES as readonly string[]).includes(raw.kind)) throw invalid('rules.kind: must be clip or memo');
    rules.kind = raw.kind as RecordingType;
  }
  if (Object.keys(rules).length === 0) throw invalid('rules: configure at least one of prefix, captureInput, kind');
  return rules;
}

function validEvents(raw: readonly string[] | undefined, mode: PayloadMode, rules: WebhookRules | null): EventType[] {
  if (rules) {
    // Rule subscriptions get rule deliveries only, which are recording.transcript_ready (docs/decisions.md §6).
    if (raw === undefined) return [RULE_EVENT];
    if (raw.some((e) => e !== RULE_EVENT)) throw invalid(`events: a subscription with rules receives only ${RULE_EVENT}`);
  }
  if (raw === undefined || raw.length === 0) throw invalid('events: name at least one event type');
  const allowed: readonly string[] = mode === 'text' ? EVENT_TYPES : DEFAULT_MODE_EVENTS;
  raw.forEach((name, i) => {
    if (allowed.includes(name)) return;
    if ((EVENT_TYPES as readonly string[]).includes(name)) {
      throw invalid(`events[${i}]: ${name} is delivered to text-mode subscriptions only (payloadMode "text")`);
    }
    throw invalid(`events[${i}]: unknown event type ${JSON.stringify(name)}; use ${allowed.join(', ')}`);
  });
  return [...new Set(raw as readonly EventType[])];
}

/** Checks everything but the URL's destination (the service does that with the allow list). */
export function validateWebhookInput(input: WebhookInput): ValidWebhookInput {
  if (input.url.length > MAX_URL_LENGTH) throw invalid(`url: must be at most ${MAX_URL_LENGTH} characters`);
  const mode = input.payloadMode ?? 'default';
  if (!(PAYLOAD_MODES as readonly string[]).includes(mode)) throw invalid('payloadMode: must be "text" (or omitted for the default payload)');
  const payloadMode = mode as PayloadMode;
  const rules = input.rules ? validRules(input.rules) : null;
  if (rules && payloadMode !== 'text') throw invalid('rules: capture rules need payloadMode "text"');
  return { url: input.url, events: validEvents(input.events, payloadMode, rules), payloadMode, rules };
}
