// Small helpers for the recording tests: create, read, edit, delete and list over HTTP.
import assert from 'node:assert/strict';
import type { Harness, TestResponse } from './harness';

let keys = 0;

export const newKey = (): string => `idem-${++keys}`;

export function create(h: Harness, token: string, body: unknown, key: string = newKey()): Promise<TestResponse> {
  return h.req('POST', '/api/v2/recordings', { token, body, headers: { 'idempotency-key': key } });
}

/** Creates and returns the recording JSON (asserts 201). */
export async function created(h: Harness, token: string, body: Record<string, unknown>): Promise<{ id: string; revision: number; [k: string]: unknown }> {
  const res = await create(h, token, body);
  assert.equal(res.status, 201, res.text);
  return res.json.recording;
}

export const get = (h: Harness, token: string, id: string) => h.req('GET', `/api/v2/recordings/${id}`, { token });

export const patch = (h: Harness, token: string, id: string, body: unknown, ifMatch?: string) =>
  h.req('PATCH', `/api/v2/recordings/${id}`, { token, body, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });

export const remove = (h: Harness, token: string, id: string, ifMatch?: string) =>
  h.req('DELETE', `/api/v2/recordings/${id}`, { token, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });

export async function list(h: Harness, token: string, query: Record<string, string | number> = {}): Promise<TestResponse> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return h.req('GET', `/api/v2/recordings${qs ? `?${qs}` : ''}`, { token });
}

/** Ids of one search page (asserts 200). */
export async function searchIds(h: Harness, token: string, query: Record<string, string | number>): Promise<string[]> {
  const res = await list(h, token, query);
  assert.equal(res.status, 200, res.text);
  return res.json.recordings.map((r: { id: string }) => r.id);
}

export function assertError(res: TestResponse, status: number, code: string, mentions?: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  if (mentions) assert.match(res.json.error.message, new RegExp(mentions), res.text);
}
