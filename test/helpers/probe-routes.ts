// Probe operations mounted on a test app through the real ApiRouter, so the router's own rules
// (auth, permissions, body limit, validation, error map) are tested apart from any resource's
// rules. Mount before the app's first request (Hono compiles its router then).
import { Hono } from 'hono';
import * as v from 'valibot';
import type { AppEnv } from '../../src/http/env';
import { OpenApiDoc } from '../../src/http/openapi';
import { ApiRouter } from '../../src/http/router';
import type { Harness } from './harness';

export const PROBE_FAILURE = 'SELECT secret_hash FROM api_keys WHERE secret = rlk_PROBESECRETPROBESECRET';

export function mountProbe(h: Harness): void {
  const hono = new Hono<AppEnv>();
  const r = new ApiRouter(hono, new OpenApiDoc({ title: 'probe', version: '0', description: '' }, '/probe'), h.http.deps);
  r.add(
    { method: 'get', path: '/read', operationId: 'probeRead', summary: 'needs events:read', tag: 'probe', access: { permission: 'events:read' }, responses: { 200: { description: 'ok' } } },
    (c, { principal }) => c.json({ kind: principal.kind }),
  );
  r.add(
    {
      method: 'post', path: '/echo', operationId: 'probeEcho', summary: 'echoes a body', tag: 'probe', access: { permission: 'recordings:create' },
      body: v.strictObject({ text: v.string() }),
      responses: { 200: { description: 'ok' } },
    },
    (c, { body }) => c.json({ length: body.text.length }),
  );
  r.add(
    { method: 'get', path: '/boom', operationId: 'probeBoom', summary: 'fails unexpectedly', tag: 'probe', access: 'public', responses: { 200: { description: 'never' } } },
    () => {
      const e = new Error(PROBE_FAILURE) as Error & { code: string };
      e.name = 'SqliteError';
      e.code = 'SQLITE_ERROR';
      throw e;
    },
  );
  r.add(
    { method: 'get', path: '/busy', operationId: 'probeBusy', summary: 'database stays locked', tag: 'probe', access: 'public', responses: { 200: { description: 'never' } } },
    () => {
      throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
    },
  );
  r.add(
    { method: 'get', path: '/throw-null', operationId: 'probeThrowNull', summary: 'throws a non-Error', tag: 'probe', access: 'public', responses: { 200: { description: 'never' } } },
    () => {
      throw null; // eslint-disable-line no-throw-literal -- checks the error map survives odd throws
    },
  );
  h.app.route('/probe', hono);
}
