// Capture rules of text-mode subscriptions (spec "Capture rules", CONTRACT §6). Runs as a
// RecordingService change hook, inside the write that causes it, so a rule delivery is stored in
// the same transaction as the transcript or metadata that fires it.
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
import { CaptureEvaluationStore, type CaptureEvaluationRow } from '../store/capture-evaluation-store';
import type { WebhookRow } from '../store/webhook-store';
import type { RecordingRow } from './recording-model';
import { matchPrefix, textPayloadBody } from './text-payload';
import type { WebhookRules } from './webhook-input';
import type { WebhookService } from './webhooks';

const RULE_TYPE = 'recording.transcript_ready';

const isRuleSubscription = (w: WebhookRow): boolean => w.payload_mode === 'text' && w.rules !== null;

/** A capture newly admitted by this write (see the header). */
function admitted(before: RecordingRow | null, after: RecordingRow): boolean {
  if (after.native !== 1) return false;
  if (before === null) return true;
  return before.native === 0 && before.transcript === '';
}

export class CaptureRules {
  readonly store: CaptureEvaluationStore;

  constructor(
    private readonly core: Core,
    private readonly webhooks: WebhookService,
  ) {
    this.store = new CaptureEvaluationStore(core.db);
  }

  /** RecordingService change hook. `after.updated_at` is the write's clock reading. */
  onChange(before: RecordingRow | null, after: RecordingRow): void {
    if (after.deleted_at !== null) {
      this.store.removeForRecording(after.id);
      return;
    }
    const now = after.updated_at;
    if (admitted(before, after)) {
      for (const w of this.webhooks.store.active(after.account_id)) {
        if (!isRuleSubscription(w)) continue;
        if (before !== null && w.created_at > after.created_at) continue;
        this.store.open(after.id, w.id, after.account_id, now);
      }
    }
    const evaluations = this.store.forRecording(after.id);
    if (evaluations.length === 0) return;
    const metadataArrived = before !== null && before.capture_input === null && after.capture_input !== null;
    for (const e of evaluations) {
      if (e.status === 'pending_transcription' && after.transcript !== '') this.decide(e, after, now);
      else if (e.status === 'waiting_for_capture_input' && metadataArrived) this.release(e, after, now);
    }
  }

  /** The first nonempty transcript: match kind and prefix, then queue or wait for the input. */
  private decide(e: CaptureEvaluationRow, row: RecordingRow, now: number): void {
    const webhook = this.activeSubscription(e);
    const event = this.store.transcriptEvent(row.account_id, row.id, row.revision);
    const rules = webhook && (JSON.parse(webhook.rules ?? '{}') as WebhookRules);
    const command = rules ? commandFor(rules, row) : null;
    if (!webhook || !event || command === null) {
      this.store.remove(e.recording_id, e.webhook_id);
      return;
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
      return;
    }
    this.store.remove(e.recording_id, e.webhook_id);
    if (rules?.captureInput !== undefined && rules.captureInput !== row.capture_input) return;
    this.enqueue(webhook, row.id, snapshot, now);
  }

  /** Capture metadata arrived for an evaluation that waited for it. */
  private release(e: CaptureEvaluationRow, row: RecordingRow, now: number): void {
    this.store.remove(e.recording_id, e.webhook_id);
    const webhook = this.activeSubscription(e);
    if (!webhook || e.body === null || e.delivery_id === null || e.event_id === null || e.revision === null) return;
    const rules = JSON.parse(webhook.rules ?? '{}') as WebhookRules;
    if (rules.captureInput !== row.capture_input) return;
    this.enqueue(webhook, row.id, { deliveryId: e.delivery_id, eventId: e.event_id, revision: e.revision, body: e.body }, now);
  }

  private enqueue(webhook: WebhookRow, recordingId: string, s: { deliveryId: string; eventId: string; revision: number; body: string }, now: number): void {
    this.webhooks.outbox.enqueue({
      id: s.deliveryId,
      webhook,
      eventId: s.eventId,
      recordingId,
      revision: s.revision,
      kind: 'rule',
      body: s.body,
      now,
    });
  }

  private activeSubscription(e: CaptureEvaluationRow): WebhookRow | undefined {
    const w = this.webhooks.store.byId(e.webhook_id);
    return w && w.status === 'active' && isRuleSubscription(w) ? w : undefined;
  }
}

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
