// Types shared by the HTTP layer.
import type { Context } from 'hono';
import type { Principal } from '../permissions';
import type { Services } from '../services';
import type { RateLimiter } from './rate-limit';

export type AppEnv = {
  Variables: {
    requestId: string;
    principal: Principal;
  };
};

export interface HttpDeps {
  services: Services;
  rateLimiter: RateLimiter;
  /** The origin the server is reached at, for the cookie Origin check and fetchUrl. */
  serverOrigin(c: Context): string;
}
