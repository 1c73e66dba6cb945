// Webhooks: create (secret shown once), and every subscription with its deliveries.
import { useState } from 'preact/hooks';
import { api } from './api';
import { SecretBox } from './secret-box';
import { Empty, LoadError, Loading } from './states';
import { useLoad } from './use-load';
import { WebhookCard } from './webhook-card';
import { WebhookForm } from './webhook-form';

export function WebhooksPage() {
  const loaded = useLoad(() => api.webhooks(), []);
  const [mode, setMode] = useState<{ kind: 'list' } | { kind: 'form' } | { kind: 'secret'; secret: string }>({ kind: 'list' });
  const webhooks = loaded.value;
  return (
    <section aria-labelledby="webhooks-title">
      <div class="page-head with-action">
        <div>
          <h1 id="webhooks-title">Webhooks</h1>
          <p class="lede">reclib sends a signed request to your URL when recordings change.</p>
        </div>
        {mode.kind === 'list' && (
          <button type="button" class="button primary" onClick={() => setMode({ kind: 'form' })}>
            Create webhook
          </button>
        )}
      </div>
      {mode.kind === 'form' && (
        <WebhookForm
          onCancel={() => setMode({ kind: 'list' })}
          onCreated={(secret) => {
            setMode({ kind: 'secret', secret });
            loaded.reload();
          }}
        />
      )}
      {mode.kind === 'secret' && <SecretBox what="Webhook" secret={mode.secret} onDone={() => setMode({ kind: 'list' })} />}
      {!webhooks ? (
        loaded.error !== undefined ? <LoadError what="your webhooks" error={loaded.error} retry={loaded.reload} /> : <Loading what="your webhooks" />
      ) : webhooks.length === 0 ? (
        <Empty title="No webhooks yet.">
          <p>Create one to have reclib call your service when a recording is created, edited, transcribed or deleted.</p>
        </Empty>
      ) : (
        <div class="stack">
          {webhooks.map((w) => (
            <WebhookCard key={w.id} webhook={w} onChanged={loaded.reload} />
          ))}
        </div>
      )}
    </section>
  );
}
