// Looking again at a still-changing thing, at the pace of poll-pace.ts (which says why).
import { useEffect, useRef } from 'preact/hooks';
import { FIRST_POLL_MS, nextPollMs } from './poll-pace';

/**
 * Calls `reload` while `active`, at nextPollMs() intervals judged by `snapshot` (what was loaded:
 * a change brings the pace back up), waiting for the tab to be shown again when it is hidden.
 * Returns a function that resets the pace (call it after the person acts).
 */
export function usePoll(active: boolean, snapshot: string, reload: () => void): () => void {
  const pace = useRef({ ms: FIRST_POLL_MS, last: snapshot });
  const changed = snapshot !== pace.current.last;
  pace.current.last = snapshot;
  useEffect(() => {
    if (!active) return;
    const ms = nextPollMs(pace.current.ms, changed);
    pace.current.ms = ms;
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
  }, [active, snapshot]);
  return () => {
    // The next look comes FIRST_POLL_MS after the next load.
    pace.current.ms = FIRST_POLL_MS / 2;
  };
}
