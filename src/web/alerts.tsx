// How a page or form says that something went wrong: one role="alert" box, so a screen reader
// announces every failure the same way.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * Brings an alert into view when it appears or says something new: it sits at the top of its form,
 * which may be scrolled far above the button that failed (a long transcript's Save).
 */
function useInView<T extends HTMLElement>(shown: unknown) {
  const ref = useRef<T>(null);
  useEffect(() => {
    if (shown) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [shown]);
  return ref;
}

/** The message of a failed action; nothing while there is none. */
export function ErrorAlert({ message }: { message: string | null | undefined }) {
  const ref = useInView<HTMLParagraphElement>(message);
  if (!message) return null;
  return (
    <p class="alert" role="alert" ref={ref}>
      {message}
    </p>
  );
}

/** What this form edits was changed elsewhere (412): says so, with Reload to start from the new version. */
export function ConflictAlert({ onReload, extraClass, children }: { onReload: () => void; extraClass?: string; children: ComponentChildren }) {
  const ref = useInView<HTMLDivElement>(true);
  return (
    <div class={extraClass ? `alert ${extraClass}` : 'alert'} role="alert" ref={ref}>
      {children}
      <button type="button" class="button" onClick={onReload}>
        Reload
      </button>
    </div>
  );
}
