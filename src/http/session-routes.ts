// Password login for the account owner's session: POST/DELETE /api/session (CONTRACT §3).
import { deleteCookie, setCookie } from 'hono/cookie';
import * as v from 'valibot';
import type { HttpDeps } from './env';
import type { ApiRouter } from './router';
import { Id } from './schemas';

const SessionBody = v.strictObject({ account: Id, password: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)) });
const SessionOut = v.object({ session: v.object({ token: v.string(), expiresAt: v.number() }) });

export function registerSessionRoutes(r: ApiRouter, deps: HttpDeps): void {
  const { auth } = deps.services;
  r.add(
    {
      method: 'post', path: '/session', operationId: 'createSession', tag: 'session', access: 'public',
      summary: 'Sign in with the account password; returns a session token and sets the reclib_session cookie',
      body: SessionBody,
      responses: { 200: { description: 'Signed in', schema: SessionOut } },
    },
    (c, { body }) => {
      // Password guesses count against the account like requests against a key.
      deps.rateLimiter.takeFor(`login:${body.account}`, c);
      const session = auth.login(body.account, body.password);
      const secure = deps.serverOrigin(c).startsWith('https:');
      setCookie(c, 'reclib_session', session.token, {
        httpOnly: true, sameSite: 'Strict', path: '/', secure, expires: new Date(session.expiresAt),
      });
      return c.json({ session });
    },
  );
  r.add(
    {
      method: 'delete', path: '/session', operationId: 'deleteSession', tag: 'session', access: 'session',
      summary: 'Sign out: ends the current session',
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
