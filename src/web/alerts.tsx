// How a page or form says that something went wrong: one role="alert" box, so a screen reader
// announces every failure the same way.
import type { ComponentChildren } from 'preact';

/** The message of a failed action; nothing while there is none. */
export function ErrorAlert({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="alert" role="alert">
      {message}
    </p>
  );
}

/** What this form edits was changed elsewhere (412): says so, with Reload to start from the new version. */
export function ConflictAlert({ onReload, extraClass, children }: { onReload: () => void; extraClass?: string; children: ComponentChildren }) {
  return (
    <div class={extraClass ? `alert ${extraClass}` : 'alert'} role="alert">
      {children}
      <button type="button" class="button" onClick={onReload}>
        Reload
      </button>
    </div>
  );
}
