// A new secret, shown once, in an element labelled Secret with a Copy button. The text is both
// the value and the content of a read-only textarea, so it can be read either way.
import { useRef, useState } from 'preact/hooks';

async function copyText(text: string, from: HTMLTextAreaElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (plain http on another host): select the text and use the older command.
    from?.select();
    return document.execCommand('copy');
  }
}

export function SecretBox({ secret, what, onDone }: { secret: string; what: string; onDone: () => void }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  return (
    <div class="card secret-box" role="region" aria-labelledby="secret-title">
      <h2 id="secret-title">{what} created</h2>
      <p>Copy the secret now: it is shown only this once and cannot be read again.</p>
      <label class="field">
        <span>Secret</span>
        <textarea ref={area} class="secret" readOnly rows={2} spellcheck={false} onFocus={(e) => e.currentTarget.select()}>
          {secret}
        </textarea>
      </label>
      <div class="actions">
        <button type="button" class="button primary" onClick={async () => setCopied(await copyText(secret, area.current))}>
          Copy
        </button>
        <button type="button" class="button" onClick={onDone}>
          Done
        </button>
        <span role="status" class="save-state">
          {copied === true ? 'Copied to the clipboard' : copied === false ? 'Select the text and copy it by hand' : ''}
        </span>
      </div>
    </div>
  );
}
