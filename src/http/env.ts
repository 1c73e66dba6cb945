// Types shared by the HTTP layer.
import type { Context } from 'hono';
import type { Principal } from '../permissions';
import type { Services } from '../services';
import type { RateLimiter } from './rate-limit';
import type { WriteCaller } from './write-calls';

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

/** A request as handed to the writer thread (structured-clone friendly). */
export interface ForwardedRequest {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body: Uint8Array | undefined;
}

/** Its answer. */
export interface ForwardedAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/** call() runs a service call on the writer thread (write-calls.ts); it rejects with the call's error, or as forward() does. */
export interface WriteForwarder extends WriteCaller {
  /** Rejects with an AppError (503) when the writer thread cannot take requests. */
  forward(request: ForwardedRequest): Promise<ForwardedAnswer>;
}
