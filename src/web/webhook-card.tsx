// One subscription: its settings and status, Send test, Disable, and its recent deliveries (status
// word, attempts, last code, last error), looked at again while any is still queued (poll.ts).
// Disable asks first: it cannot be undone.
import { useState } from 'preact/hooks';
import { api, describeError } from './api';
import type { Webhook } from './api-types';
import { ConfirmDialog } from './confirm-dialog';
import { DeliveryStatus } from './delivery-status';
import { usePoll } from './poll';
import { LoadError, Loading } from './states';
import { dateTime } from './time-format';
import { useLoad } from './use-load';

export function WebhookCard({ webhook: w, onChanged }: { webhook: Webhook; onChanged: () => void }) {
  const deliveries = useLoad(() => api.webhookDeliveries(w.id), [w.id]);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const titleId = `wh-${w.id}`;

  // Looked at again while a delivery is queued: soon after Send test, less often while a failing
  // receiver's retries wait (poll.ts).
  const waiting = deliveries.value?.some((d) => d.status === 'queued') ?? false;
  const soon = usePoll(waiting, deliveries.value, deliveries.reload);

  const act = async (what: () => Promise<unknown>, done: string) => {
    setMessage(null);
    setBusy(true);
    try {
      await what();
      setMessage({ text: done, error: false });
      soon();
      deliveries.reload();
    } catch (e) {
      setMessage({ text: describeError(e), error: true });
    } finally {
      setBusy(false);
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
          <button type="button" class="button" disabled={busy} onClick={() => act(() => api.testWebhook(w.id), 'Test event queued.')}>
            Send test
          </button>
          <button type="button" class="button danger-outline" disabled={busy} onClick={() => setConfirming(true)}>
            Disable
          </button>
        </div>
      )}
      {confirming && (
        <ConfirmDialog
          title="Disable this webhook?"
          confirmLabel="Disable"
          busy={busy}
          onConfirm={() => act(async () => { try { await api.disableWebhook(w.id); } finally { setConfirming(false); } onChanged(); }, 'Disabled.')}
          onCancel={() => setConfirming(false)}
        >
          <p>Nothing more is sent to {w.url}, and its queued deliveries are cancelled. A disabled webhook cannot be turned on again: create a new one.</p>
        </ConfirmDialog>
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
