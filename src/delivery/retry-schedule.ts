// Delivery retry schedule (docs/decisions.md §6: eight attempts, exponential backoff starting
// at one minute; docs/decisions.md §1 --delivery-backoff-ms sets the first delay). Pure, so the scheduler
// and its tests agree on the numbers without a clock.

export const MAX_ATTEMPTS = 8;

/** True once `attemptsDone` attempts have been made: no further attempt is scheduled. */
export function isFinalAttempt(attemptsDone: number): boolean {
  return attemptsDone >= MAX_ATTEMPTS;
}

/**
 * Wait after the `attemptsDone`-th failed attempt before the next one: base, 2×base, 4×base, …
 * Asking for a delay after the final attempt is a scheduler bug, so it throws.
 */
export function retryDelayMs(attemptsDone: number, baseMs: number): number {
  if (!Number.isInteger(attemptsDone) || attemptsDone < 1 || isFinalAttempt(attemptsDone)) {
    throw new RangeError(`no retry follows attempt ${attemptsDone} (attempts run 1-${MAX_ATTEMPTS})`);
  }
  if (!Number.isFinite(baseMs) || baseMs < 0) throw new RangeError('baseMs must be a non-negative number');
  return baseMs * 2 ** (attemptsDone - 1);
}
