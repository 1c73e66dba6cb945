// Creating a webhook subscription: URL, event checkboxes (labelled with the event names), Payload
// mode, and for text mode the capture-rule fields. A refused URL shows the server's message.
import { useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import type { WebhookRules } from './api-types';
import { CreateActions } from './form-actions';
import { EVENT_TYPES, inputLabel, INPUT_NAMES } from './vocabulary';

export function WebhookForm({ onCreated, onCancel }: { onCreated: (secret: string) => void; onCancel: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [mode, setMode] = useState<'default' | 'text'>('default');
  const [rules, setRules] = useState<WebhookRules>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const toggle = (t: string, on: boolean) => setEvents(on ? [...events, t] : events.filter((x) => x !== t));
  const setRule = (patch: WebhookRules) => setRules({ ...rules, ...patch });

  const chosenRules = Object.fromEntries(Object.entries(rules).filter(([, val]) => val)) as WebhookRules;
  // A subscription with a rule gets rule deliveries (recording.transcript_ready) only: no events.
  const hasRules = mode === 'text' && Object.keys(chosenRules).length > 0;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api.createWebhook({
        url: url.trim(),
        ...(hasRules ? {} : { events: EVENT_TYPES.filter((t) => events.includes(t)) }),
        ...(mode === 'text' ? { payloadMode: 'text' as const } : {}),
        ...(hasRules ? { rules: chosenRules } : {}),
      });
      onCreated(created.secret);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="webhook-form-title">
      <h2 id="webhook-form-title">New webhook</h2>
      <ErrorAlert message={error} />
      <label class="field">
        <span>URL</span>
        <input inputMode="url" autoComplete="off" spellcheck={false} value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/hooks/reclib" autoFocus />
      </label>
      <fieldset class="field">
        <legend>Events</legend>
        <div class="checks">
          {EVENT_TYPES.map((t) => (
            <label key={t} class="check">
              <input type="checkbox" checked={!hasRules && events.includes(t)} disabled={hasRules} onChange={(e) => toggle(t, e.currentTarget.checked)} />
              <code>{t}</code>
            </label>
          ))}
        </div>
        <p class="hint">
          {hasRules ? 'With a capture rule, only recording.transcript_ready is sent, for the captures that match.' : 'recording.transcript_ready needs the text payload mode.'}
        </p>
      </fieldset>
      <label class="field narrow">
        <span>Payload mode</span>
        <select value={mode} onChange={(e) => setMode(e.currentTarget.value as 'default' | 'text')}>
          <option value="default">default</option>
          <option value="text">text</option>
        </select>
      </label>
      <p class="hint">{mode === 'text' ? 'Text payloads carry the title, transcript and summary.' : 'Default payloads carry the event and the recording id, no text.'}</p>
      {mode === 'text' && (
        <fieldset class="field">
          <legend>Capture rule (optional)</legend>
          <p class="hint">With a rule, only app captures made after this subscription that match every condition are sent, once their transcript is ready.</p>
          <div class="rule-fields">
            <label class="field">
              <span>Prefix</span>
              <input value={rules.prefix ?? ''} onInput={(e) => setRule({ prefix: e.currentTarget.value })} placeholder="e.g. todo" />
            </label>
            <label class="field">
              <span>Capture input</span>
              <select value={rules.captureInput ?? ''} onChange={(e) => setRule({ captureInput: e.currentTarget.value })}>
                <option value="">Any input</option>
                {INPUT_NAMES.map((i) => (
                  <option key={i} value={i}>
                    {inputLabel(i)}
                  </option>
                ))}
              </select>
            </label>
            <label class="field">
              <span>Kind</span>
              <select value={rules.kind ?? ''} onChange={(e) => setRule({ kind: e.currentTarget.value })}>
                <option value="">Any kind</option>
                <option value="clip">clip</option>
                <option value="memo">memo</option>
              </select>
            </label>
          </div>
        </fieldset>
      )}
      <CreateActions busy={busy} onCancel={onCancel} />
    </form>
  );
}
