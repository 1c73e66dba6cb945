// Types shared by the HTTP layer.
import type { Context } from 'hono';
import type { Principal } from '../permissions';
import type { Services } from '../services';
import type { WriteForwarder } from './forward-write';
import type { RateLimiter } from './rate-limit';

export type AppEnv = {
  Variables: {
    requestId: string;
    principal: Principal;
    /** Headers a directAnswer route's jsonAnswer() adds (the rate limit's), instead of c.header(). */
    answerHeaders: Record<string, string> | undefined;
  };
};

export interface HttpDeps {
  services: Services;
  rateLimiter: RateLimiter;
  /** The server's origin (scheme://host:port of --public-url, else of the request), for the cookie Origin check. */
  serverOrigin(c: Context): string;
  /** The writer thread that answers writes (reclib serve); absent: writes run in this thread (tests, :memory:). */
  writes?: WriteForwarder;
}
