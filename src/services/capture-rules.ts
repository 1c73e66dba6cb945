// Capture rules of text-mode subscriptions (spec "Capture rules", docs/decisions.md §6). The outbox runs
// them from its RecordingService change hook, inside the write that causes them, and queues the
// rule deliveries they decide, so a rule delivery is stored in the same transaction as the
// transcript or metadata that fires it.
//
// Lifecycle of one (native capture, rule subscription) pair:
//   admission ........ a native capture is created (a session create with deviceId or captureInput),
//                      or a session's recording becomes native through late capture metadata while
//                      it has no transcript yet. Every rule subscription active then (and, for a
//                      late admission, created no later than the recording) gets an evaluation in
//                      state pending_transcription. Imports (API keys, sessions without capture
//                      metadata) are never admitted, so their text never fires a rule.
//   first nonempty transcript: kind and prefix are checked on that revision; a mismatch ends the
//                      evaluation. If the rule has a captureInput condition and the capture has no
//                      capture input yet, the snapshot of that revision is stored and the
//                      evaluation waits (waiting_for_capture_input); otherwise the delivery is queued.
//   capture metadata . a waiting evaluation is queued with its stored snapshot if the input
//                      matches, else it ends.
// Decided evaluations are deleted, so later edits never fire again. The delivery carries
// type recording.transcript_ready and eventId = the transcript_ready event of the snapshot revision.
import type { Core } from '../context';
import { newId } from '../ids';
import type { CaptureEvaluationRow, CaptureEvaluationStore } from '../store/capture-evaluation-store';
import type { EventStore } from '../store/event-store';
import type { WebhookRow, WebhookStore } from '../store/webhook-store';
import type { RecordingRow } from './recording-model';
import { matchPrefix, textPayloadBody } from './text-payload';
import type { WebhookRules } from './webhook-input';

const RULE_TYPE = 'recording.transcript_ready';

const isRuleSubscription = (w: WebhookRow): boolean => w.payload_mode === 'text' && w.rules !== null;

/** A capture newly admitted by this write (see the header). */
function admitted(before: RecordingRow | null, after: RecordingRow): boolean {
  if (after.native !== 1) return false;
  if (before === null) return true;
  return before.native === 0 && before.transcript === '';
}

/** A rule delivery the rules decided; the outbox queues it in the same transaction. */
export interface RuleDelivery {
  id: string;
  webhook: WebhookRow;
  eventId: string;
  recordingId: string;
  revision: number;
  kind: 'rule';
  body: string;
  now: number;
}

export class CaptureRules {
  constructor(
    private readonly core: Core,
    private readonly webhooks: WebhookStore,
    private readonly store: CaptureEvaluationStore,
    private readonly events: EventStore,
  ) {}

  /** Runs in every recording write; returns the rule deliveries to queue. `after.updated_at` is the write's clock reading. */
  onChange(before: RecordingRow | null, after: RecordingRow): RuleDelivery[] {
    if (after.deleted_at !== null) {
      this.store.removeForRecording(after.id);
      return [];
    }
    const now = after.updated_at;
    if (admitted(before, after)) {
      for (const w of this.webhooks.active(after.account_id)) {
        if (!isRuleSubscription(w)) continue;
        if (before !== null && w.created_at > after.created_at) continue;
        this.store.open(after.id, w.id, after.account_id, now);
      }
    }
    const evaluations = this.store.forRecording(after.id);
    const queued: RuleDelivery[] = [];
    const metadataArrived = before !== null && before.capture_input === null && after.capture_input !== null;
    for (const e of evaluations) {
      let d: RuleDelivery | null = null;
      if (e.status === 'pending_transcription' && after.transcript !== '') d = this.decide(e, after, now);
      else if (e.status === 'waiting_for_capture_input' && metadataArrived) d = this.release(e, after, now);
      if (d) queued.push(d);
    }
    return queued;
  }

  /** The first nonempty transcript: match kind and prefix, then queue or wait for the input. */
  private decide(e: CaptureEvaluationRow, row: RecordingRow, now: number): RuleDelivery | null {
    const webhook = this.activeSubscription(e);
    const event = this.events.transcriptEvent(row.account_id, row.id, row.revision);
    const rules = webhook && (JSON.parse(webhook.rules ?? '{}') as WebhookRules);
    const command = rules ? commandFor(rules, row) : null;
    if (!webhook || !event || command === null) {
      this.store.remove(e.recording_id, e.webhook_id);
      return null;
    }
    const deliveryId = newId('dlv');
    const snapshot = {
      revision: row.revision,
      eventId: String(event.seq),
      eventAt: event.created_at,
      deliveryId,
      body: textPayloadBody(this.core.config, {
        deliveryId,
        type: RULE_TYPE,
        eventId: String(event.seq),
        createdAt: event.created_at,
        revision: row.revision,
        row,
        command,
      }),
    };
    if (rules?.captureInput !== undefined && row.capture_input === null) {
      this.store.wait(e.recording_id, e.webhook_id, snapshot, now);
      return null;
    }
    this.store.remove(e.recording_id, e.webhook_id);
    if (rules?.captureInput !== undefined && rules.captureInput !== row.capture_input) return null;
    return ruleDelivery(webhook, row.id, snapshot, now);
  }

  /** Capture metadata arrived for an evaluation that waited for it. */
  private release(e: CaptureEvaluationRow, row: RecordingRow, now: number): RuleDelivery | null {
    this.store.remove(e.recording_id, e.webhook_id);
    const webhook = this.activeSubscription(e);
    if (!webhook || e.body === null || e.delivery_id === null || e.event_id === null || e.revision === null) return null;
    const rules = JSON.parse(webhook.rules ?? '{}') as WebhookRules;
    if (rules.captureInput !== row.capture_input) return null;
    return ruleDelivery(webhook, row.id, { deliveryId: e.delivery_id, eventId: e.event_id, revision: e.revision, body: e.body }, now);
  }

  private activeSubscription(e: CaptureEvaluationRow): WebhookRow | undefined {
    const w = this.webhooks.byId(e.webhook_id);
    return w && w.status === 'active' && isRuleSubscription(w) ? w : undefined;
  }
}

const ruleDelivery = (webhook: WebhookRow, recordingId: string, s: { deliveryId: string; eventId: string; revision: number; body: string }, now: number): RuleDelivery => ({
  id: s.deliveryId,
  webhook,
  eventId: s.eventId,
  recordingId,
  revision: s.revision,
  kind: 'rule',
  body: s.body,
  now,
});

/**
 * The command of a rule delivery when kind and prefix match (the transcript after the prefix,
 * without the whitespace and punctuation that follow it; the whole transcript without a prefix
 * condition), else null.
 */
function commandFor(rules: WebhookRules, row: RecordingRow): string | null {
  if (rules.kind !== undefined && rules.kind !== row.type) return null;
  if (rules.prefix === undefined) return row.transcript;
  return matchPrefix(row.transcript, rules.prefix);
}
