// The webhook deliveries of one recording (v1 listing) with a resend for a failed one: a manual
// send of the current revision to the same subscription.
import { useState } from 'preact/hooks';
import { api, describeError } from './api';
import type { Recording, Webhook } from './api-types';
import { DeliveryStatus } from './delivery-status';
import { LoadError, Loading } from './states';
import { dateTime } from './time-format';
import { useLoad } from './use-load';
import { statusLabel } from './vocabulary';

export function RecordingDeliveries({ recording }: { recording: Recording }) {
  const loaded = useLoad(async () => {
    const [status, webhooks] = await Promise.all([api.recordingDeliveries(recording.id), api.webhooks().catch((): Webhook[] => [])]);
    return { ...status, urls: new Map(webhooks.map((w) => [w.id, w.url])) };
  }, [recording.id, recording.revision]);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  /** A resend on its way: every Resend waits for it (a double click queued two). */
  const [sending, setSending] = useState(false);

  const resend = async (webhookId: string) => {
    if (sending) return;
    setMessage(null);
    setSending(true);
    try {
      await api.resend(recording.id, webhookId, recording.revision);
      setMessage({ text: 'Queued again: the delivery will be attempted shortly.', error: false });
      loaded.reload();
    } catch (e) {
      setMessage({ text: describeError(e), error: true });
    } finally {
      setSending(false);
    }
  };

  const v = loaded.value;
  return (
    <section class="card deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      {message && (
        <p class={message.error ? 'alert' : 'notice'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {!v ? (
        loaded.error !== undefined ? <LoadError what="the deliveries" error={loaded.error} retry={loaded.reload} /> : <Loading what="deliveries" />
      ) : v.deliveries.length === 0 && v.pendingCaptureEvaluations.length === 0 ? (
        <p class="muted">No webhook deliveries for this recording. Subscriptions on the Webhooks page send its events.</p>
      ) : (
        <ul class="delivery-list">
          {v.pendingCaptureEvaluations.map((e) => (
            <li key={`eval-${e.webhookId}`} class="delivery">
              <div class="delivery-main">
                <span class="status status-waiting">{statusLabel(e.status)}</span>
                <span class="delivery-target">{v.urls.get(e.webhookId) ?? e.webhookId}</span>
              </div>
              <p class="muted small">Capture rule not decided yet</p>
            </li>
          ))}
          {[...v.deliveries].reverse().map((d) => (
            <li key={d.id} class="delivery">
              <div class="delivery-main">
                <DeliveryStatus status={d.status} />
                <span class="delivery-target">{v.urls.get(d.webhookId) ?? d.webhookId}</span>
                {d.status === 'failed' && (
                  <button type="button" class="button small" disabled={sending} onClick={() => resend(d.webhookId)} aria-label={`Resend to ${v.urls.get(d.webhookId) ?? d.webhookId}`}>
                    Resend
                  </button>
                )}
              </div>
              <p class="muted small">
                {d.type} · revision {d.revision} · {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
                {d.lastStatusCode !== null ? ` · last code ${d.lastStatusCode}` : ''} · {dateTime(d.createdAt)}
              </p>
              {d.lastError && <p class="delivery-error small">{d.lastError}</p>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
