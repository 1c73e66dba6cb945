// Looking again at a still-changing thing, at the pace of poll-pace.ts (which says why).
import { useEffect, useRef } from 'preact/hooks';
import { FIRST_POLL_MS, nextPollMs } from './poll-pace';

/**
 * Calls `reload` while `active`, at nextPollMs() intervals, after each load of `value` (a new
 * object at every load, changed or not: each one arms the next look); a load whose content differs
 * from the one before brings the pace back up. Waits for the tab to be shown again when it is
 * hidden. Returns a function that resets the pace (call it after the person acts).
 */
export function usePoll(active: boolean, value: unknown, reload: () => void): () => void {
  const pace = useRef({ ms: FIRST_POLL_MS / 2, last: '' });
  useEffect(() => {
    if (!active) return;
    const snapshot = JSON.stringify(value ?? null);
    const ms = nextPollMs(pace.current.ms, snapshot !== pace.current.last && pace.current.last !== '');
    pace.current = { ms, last: snapshot };
    let onShown: (() => void) | undefined;
    const timer = setTimeout(() => {
      if (!document.hidden) return reload();
      onShown = () => {
        if (document.hidden) return;
        removeEventListener('visibilitychange', onShown!);
        reload();
      };
      addEventListener('visibilitychange', onShown);
    }, ms);
    return () => {
      clearTimeout(timer);
      if (onShown) removeEventListener('visibilitychange', onShown);
    };
  }, [active, value]);
  return () => {
    // The next look comes FIRST_POLL_MS after the next load.
    pace.current = { ms: FIRST_POLL_MS / 2, last: '' };
  };
}
