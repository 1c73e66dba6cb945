// At most N requests in any 60 s per credential (docs/decisions.md §5): a sliding log of the last N
// request times per credential. Exceeding it answers 429 with Retry-After (whole seconds until
// the oldest request leaves the window) and RateLimit-* headers on every answer.
import type { Context } from 'hono';
import type { Clock } from '../clock';
import { AppError } from '../errors';

const WINDOW_MS = 60_000;

export class RateLimiter {
  private readonly logs = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    /** Requests per window; 0 disables the limit. */
    private readonly limit: number,
  ) {}

  /**
   * Counts one request of the credential. Returns the RateLimit-* headers its answer carries
   * (undefined when the limit is off); over the limit, throws 429 rate_limited with them.
   */
  take(credentialId: string): Record<string, string> | undefined {
    return this.limit === 0 ? undefined : this.record(credentialId, this.clock.now());
  }

  /** take(), with the time the request was counted at (for giveBack(), undefined when the limit is off). */
  count(credentialId: string): { headers: Record<string, string> | undefined; at: number | undefined } {
    if (this.limit === 0) return { headers: undefined, at: undefined };
    const at = this.clock.now();
    return { headers: this.record(credentialId, at), at };
  }

  /**
   * Counts `n` more requests of the credential, all or none: a batch of messages that counts as
   * one request each, of which one was counted already (`take`/`count`, and it stays counted).
   * Refused whole (429) when the window has no room for all of them, with a Retry-After after
   * which it has; a batch that could never fit (more than the limit) is a 400 saying so, not a
   * Retry-After that never comes. Returns the headers of the answer and the time they were
   * counted at (for giveBack()).
   */
  countMore(credentialId: string, n: number): { headers: Record<string, string> | undefined; at: number | undefined } {
    if (this.limit === 0 || n <= 0) return { headers: undefined, at: undefined };
    if (n + 1 > this.limit) {
      throw new AppError('invalid_request', `this batch holds ${n + 1} messages, each counted as a request, and the rate limit is ${this.limit} a minute: send at most ${this.limit} in one POST`);
    }
    const now = this.clock.now();
    this.sweep(now);
    let log = this.window(credentialId, now);
    if (!log) this.logs.set(credentialId, (log = []));
    if (log.length + n > this.limit) {
      // Room for n once the entry at log.length + n - limit - 1 has left the window.
      const frees = log[log.length + n - this.limit - 1] as number;
      const retryAfter = Math.max(1, Math.ceil((frees + WINDOW_MS - now) / 1000));
      throw new AppError('rate_limited', `rate limit of ${this.limit} requests per minute: this batch holds ${n + 1} messages, each counted as a request, and there is room for ${this.limit - log.length + 1} of them now; retry in ${retryAfter} s`, {
        'Retry-After': String(retryAfter),
        'RateLimit-Limit': String(this.limit),
        'RateLimit-Remaining': String(this.limit - log.length),
        'RateLimit-Reset': String(retryAfter),
      });
    }
    for (let i = 0; i < n; i++) log.push(now);
    return { headers: { 'RateLimit-Limit': String(this.limit), 'RateLimit-Remaining': String(this.limit - log.length) }, at: now };
  }

  /** Counts a request of the credential at `now`: its RateLimit-* headers, or 429 over the limit. */
  private record(credentialId: string, now: number): Record<string, string> {
    this.sweep(now);
    let log = this.window(credentialId, now);
    if (!log) this.logs.set(credentialId, (log = []));
    if (log.length >= this.limit) {
      const retryAfter = Math.max(1, Math.ceil(((log[0] as number) + WINDOW_MS - now) / 1000));
      throw new AppError('rate_limited', `rate limit of ${this.limit} requests per minute exceeded; retry in ${retryAfter} s`, {
        'Retry-After': String(retryAfter),
        'RateLimit-Limit': String(this.limit),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(retryAfter),
      });
    }
    log.push(now);
    return { 'RateLimit-Limit': String(this.limit), 'RateLimit-Remaining': String(this.limit - log.length) };
  }

  /** Whether take() would refuse the credential now (it counts nothing). */
  full(credentialId: string): boolean {
    return this.limit > 0 && (this.window(credentialId, this.clock.now())?.length ?? 0) >= this.limit;
  }

  /** The credential's log (if it has one) without the requests that left the window by `now`. */
  private window(credentialId: string, now: number): number[] | undefined {
    const log = this.logs.get(credentialId);
    while (log && log.length > 0 && (log[0] as number) <= now - WINDOW_MS) log.shift();
    return log;
  }

  /**
   * Uncounts one request of the credential that take() counted: one handed on to the app, which
   * counts it (src/http/direct-routes.ts), or one refused because the writer thread was away
   * (router.ts). Without `at` the newest entry goes: when others came in between, the window frees
   * a little later than for this one, never earlier. With `at` (count()'s), that entry goes if it
   * is still in the window, and nothing if it has left it already (a request that waited longer
   * than the window).
   */
  giveBack(credentialId: string, at?: number): void {
    const log = this.logs.get(credentialId);
    if (!log) return;
    if (at === undefined) {
      log.pop();
      return;
    }
    const i = log.lastIndexOf(at);
    if (i >= 0) log.splice(i, 1);
  }

  /** take(), with the headers put on the context's answer (for handlers that answer through c). */
  takeFor(credentialId: string, c: Context): void {
    const headers = this.take(credentialId);
    if (headers) for (const [name, value] of Object.entries(headers)) c.header(name, value);
  }

  /** Forgets idle credentials once a window so the map does not grow without bound. */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [id, log] of this.logs) {
      if (log.length === 0 || (log[log.length - 1] as number) <= now - WINDOW_MS) this.logs.delete(id);
    }
  }
}
