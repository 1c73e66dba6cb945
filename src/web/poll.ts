// How often a page looks again at something that is still changing (a webhook's queued deliveries):
// soon after the person acted, then less and less often while nothing changes, and not at all
// while the tab is hidden. A fixed 2 s made an open Webhooks page with a few failing subscriptions
// (their retries stay queued for hours) send ~100 requests a minute, and the session's rate limit
// then refused the person's other tabs.
import { useEffect, useRef } from 'preact/hooks';

export const FIRST_POLL_MS = 2_000;
export const MAX_POLL_MS = 60_000;

/** The wait before the next look: back to the first after a change, else doubled up to the most. */
export const nextPollMs = (previous: number, changed: boolean): number => (changed ? FIRST_POLL_MS : Math.min(previous * 2, MAX_POLL_MS));

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
