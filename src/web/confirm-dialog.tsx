// A modal confirmation in a real <dialog> (role dialog, focus kept inside, Escape cancels).
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

interface Props {
  title: string;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ComponentChildren;
}

export function ConfirmDialog({ title, confirmLabel, busy, onConfirm, onCancel, children }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  // A layout effect: it opens the dialog before the page is painted, and its cleanup runs before
  // Preact takes the dialog out of the page. A passive effect's cleanup runs after paint (Preact
  // 11), so the focused Cancel went with the dialog and focus sat on the body until then.
  useLayoutEffect(() => {
    const d = ref.current;
    // Focus goes back where it was (the button that opened the dialog) when it closes, as a
    // keyboard user expects, not to the page's body.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (d && !d.open) d.showModal();
    return () => {
      d?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="dialog-title" onCancel={(e) => { e.preventDefault(); onCancel(); }}>
      <h2 id="dialog-title">{title}</h2>
      {children}
      <div class="actions">
        <button type="button" class="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" class="button danger" onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
