// How often a page looks again at something that is still changing (a webhook's queued deliveries):
// soon after the person acted, then less and less often while nothing changes, and not at all
// while the tab is hidden. A fixed 2 s made an open Webhooks page with a few failing subscriptions
// (their retries stay queued for hours) send ~100 requests a minute, and the session's rate limit
// then refused the person's other tabs.

export const FIRST_POLL_MS = 2_000;
export const MAX_POLL_MS = 60_000;

/** The wait before the next look: back to the first after a change, else doubled up to the most. */
export const nextPollMs = (previous: number, changed: boolean): number => (changed ? FIRST_POLL_MS : Math.min(previous * 2, MAX_POLL_MS));
