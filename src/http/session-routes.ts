// The account owner's session: POST/GET/DELETE /api/session (docs/decisions.md §3, §8).
import { deleteCookie, setCookie } from 'hono/cookie';
import * as v from 'valibot';
import type { HttpDeps } from './env';
import type { ApiRouter } from './router';
import { UnixMs } from './schemas/numbers';

const SessionBody = v.strictObject({
  account: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
    v.description('The account id (acc_…) or the account name; names are compared ignoring case'),
  ),
  password: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
});
const SessionOut = v.object({ session: v.object({ token: v.string(), expiresAt: UnixMs }) });
const CurrentSessionOut = v.object({
  account: v.object({ id: v.string(), name: v.string() }),
  session: v.object({ expiresAt: UnixMs }),
});

/** A sign-in's rate-limit budget: the account's (its id, or the name asked for), apart from its credentials'. */
const loginBudget = (key: string): string => `login:${key}`;

export function registerSessionRoutes(r: ApiRouter, deps: HttpDeps): void {
  const { auth } = deps.services;
  r.add(
    {
      method: 'post', path: '/session', operationId: 'createSession', tag: 'session', access: 'public',
      summary:
        'Sign in with the account password; returns a session token and sets the reclib_session cookie. `account` is the account id ' +
        'or its name in any case. A wrong account or password is one 401; a name that several accounts share (possible only in a ' +
        'database from before names were unique) is a 401 asking for the account id. Attempts count against the account like requests ' +
        'against a key (429 with Retry-After), by id and by name alike',
      body: SessionBody,
      responses: {
        // The attempts of the account are counted as a key's requests are, with the same headers.
        200: { description: 'Signed in', schema: SessionOut, headers: ['RateLimit-Limit', 'RateLimit-Remaining'] },
        401: { description: 'Wrong account or password', headers: ['RateLimit-Limit', 'RateLimit-Remaining'] },
        429: { description: 'Too many attempts for this account', headers: ['RateLimit-Limit', 'RateLimit-Remaining'] },
      },
      // On `reclib serve` the writer thread signs in, and its app counts nothing: the attempt is
      // counted on the main thread first, against the same budget login() names.
      forwardedBudget: (body) => loginBudget(auth.loginBudgetKey(body.account)),
    },
    async (c, { body }) => {
      // Password guesses count against the account like requests against a key.
      const session = await auth.login(body.account, body.password, (budgetKey) => deps.rateLimiter.takeFor(loginBudget(budgetKey), c));
      const secure = deps.serverOrigin(c).startsWith('https:');
      setCookie(c, 'reclib_session', session.token, {
        httpOnly: true, sameSite: 'Strict', path: '/', secure, expires: new Date(session.expiresAt),
      });
      return c.json({ session });
    },
  );
  r.add(
    {
      method: 'get', path: '/session', operationId: 'getSession', tag: 'session', access: 'session',
      summary: 'The signed-in account and when the session ends (the web app asks this on start); 401 without a session, 403 session_required for an API key',
      responses: {
        200: { description: 'The current session', schema: CurrentSessionOut },
        401: { description: 'No session, or it ended or expired' },
        403: { description: 'session_required: an API key was sent' },
      },
    },
    (c, { principal }) => c.json(auth.sessionInfo(principal)),
  );
  r.add(
    {
      method: 'delete', path: '/session', operationId: 'deleteSession', tag: 'session', access: 'session',
      summary: 'Sign out: ends the current session (not counted against the rate limit: it always works once)',
      uncounted: true,
      responses: { 204: { description: 'Signed out' } },
    },
    (c) => {
      const header = c.req.header('authorization');
      const token = header?.replace(/^Bearer\s+/i, '') ?? '';
      const cookie = c.req.header('cookie')?.match(/(?:^|;\s*)reclib_session=([^;]+)/)?.[1];
      auth.endSession(token.startsWith('rls_') ? token : decodeURIComponent(cookie ?? ''));
      deleteCookie(c, 'reclib_session', { path: '/' });
      return c.body(null, 204);
    },
  );
}
