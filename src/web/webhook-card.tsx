// One subscription: its settings and status, Send test, Disable, and its recent deliveries (status
// word, attempts, last code, last error), polled while any is still queued.
import { useEffect, useState } from 'preact/hooks';
import { api, describeError } from './api';
import type { Webhook } from './api-types';
import { DeliveryStatus } from './delivery-status';
import { LoadError, Loading } from './states';
import { dateTime } from './time-format';
import { useLoad } from './use-load';

const POLL_MS = 2000;

export function WebhookCard({ webhook: w, onChanged }: { webhook: Webhook; onChanged: () => void }) {
  const deliveries = useLoad(() => api.webhookDeliveries(w.id), [w.id]);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const titleId = `wh-${w.id}`;

  const waiting = deliveries.value?.some((d) => d.status === 'queued') ?? false;
  useEffect(() => {
    if (!waiting) return;
    const t = setTimeout(deliveries.reload, POLL_MS);
    return () => clearTimeout(t);
  }, [deliveries.value, waiting]);

  const act = async (what: () => Promise<unknown>, done: string) => {
    setMessage(null);
    try {
      await what();
      setMessage({ text: done, error: false });
      deliveries.reload();
    } catch (e) {
      setMessage({ text: describeError(e), error: true });
    }
  };

  const rules = w.rules ? Object.entries(w.rules).filter(([, val]) => val) : [];
  return (
    <section class={`card webhook${w.status === 'disabled' ? ' is-disabled' : ''}`} aria-labelledby={titleId}>
      <div class="webhook-head">
        <h2 id={titleId} class="webhook-url">
          {w.url}
        </h2>
        <span class={`status ${w.status === 'active' ? 'tone-good' : 'tone-off'}`}>{w.status}</span>
      </div>
      <dl class="facts small">
        <div>
          <dt>Payload</dt>
          <dd>{w.payloadMode}</dd>
        </div>
        <div>
          <dt>Events</dt>
          <dd>{w.events.length ? w.events.join(', ') : 'none'}</dd>
        </div>
        {rules.length > 0 && (
          <div>
            <dt>Rule</dt>
            <dd>{rules.map(([k, val]) => `${k} = ${val}`).join(', ')}</dd>
          </div>
        )}
        <div>
          <dt>Created</dt>
          <dd>{dateTime(w.createdAt)}</dd>
        </div>
      </dl>
      {message && (
        <p class={message.error ? 'alert' : 'notice'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {w.status === 'active' && (
        <div class="actions">
          <button type="button" class="button" onClick={() => act(() => api.testWebhook(w.id), 'Test event queued.')}>
            Send test
          </button>
          <button type="button" class="button danger-outline" onClick={() => act(async () => { await api.disableWebhook(w.id); onChanged(); }, 'Disabled.')}>
            Disable
          </button>
        </div>
      )}
      <h3 class="subhead">Recent deliveries</h3>
      {!deliveries.value ? (
        deliveries.error !== undefined ? <LoadError what="deliveries" error={deliveries.error} retry={deliveries.reload} /> : <Loading what="deliveries" />
      ) : deliveries.value.length === 0 ? (
        <p class="muted small">No deliveries yet. Send a test to check the receiver.</p>
      ) : (
        <ul class="delivery-list" aria-label={`Deliveries to ${w.url}`}>
          {deliveries.value.map((d) => (
            <li key={d.id} class="delivery">
              <div class="delivery-main">
                <DeliveryStatus status={d.status} />
                <span class="delivery-target">{d.type}</span>
              </div>
              <p class="muted small">
                {d.attempts} attempt{d.attempts === 1 ? '' : 's'} · last code {d.lastStatusCode ?? '—'} · {dateTime(d.updatedAt)}
              </p>
              {d.lastError && <p class="delivery-error small">{d.lastError}</p>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
