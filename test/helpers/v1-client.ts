// Small helpers for the v1 tests: recording writes and reads over /api/v1.
import assert from 'node:assert/strict';
import { harness, type Harness, type TestResponse } from './harness';

/** A fresh harness whose account has the ring device ring-1. */
export function withRing(): Harness {
  const h = harness();
  h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
  return h;
}

let keys = 0;
export const v1Key = (): string => `v1-idem-${++keys}`;

export function v1Create(h: Harness, token: string, body: unknown, key: string = v1Key()): Promise<TestResponse> {
  return h.req('POST', '/api/v1/recordings', { token, body, headers: { 'idempotency-key': key } });
}

/** Creates over v1 and returns the recording JSON (asserts 200). */
export async function v1Created(h: Harness, token: string, body: Record<string, unknown>): Promise<{ id: string; revision: number; [k: string]: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await v1Create(h, token, body);
  assert.equal(res.status, 200, res.text);
  return res.json.recording;
}

export const v1Get = (h: Harness, token: string, id: string) => h.req('GET', `/api/v1/recordings/${id}`, { token });

export const v1Put = (h: Harness, token: string, id: string, body: unknown, ifMatch?: string | number) =>
  h.req('PUT', `/api/v1/recordings/${id}`, { token, body, headers: ifMatch === undefined ? {} : { 'if-match': String(ifMatch) } });

export const v1Delete = (h: Harness, token: string, id: string, ifMatch?: string | number) =>
  h.req('DELETE', `/api/v1/recordings/${id}`, { token, headers: ifMatch === undefined ? {} : { 'if-match': String(ifMatch) } });

export const v1Processing = (h: Harness, token: string, id: string, body: unknown) =>
  h.req('PUT', `/api/v1/recordings/${id}/processing`, { token, body });

export const v1Audio = (h: Harness, token: string, id: string, body: unknown) =>
  h.req('PUT', `/api/v1/recordings/${id}/audio-assets`, { token, body });

export function v1List(h: Harness, token: string, query: Record<string, string | number> = {}, path = '/api/v1/recordings'): Promise<TestResponse> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)] as [string, string])).toString();
  return h.req('GET', `${path}${qs ? `?${qs}` : ''}`, { token });
}

/** The account's feed as "type@revision" strings (v2 feed, read through the service). */
export function feedTypes(h: Harness, recordingId?: string): string[] {
  return h.services.events
    .feed(h.accountId, undefined, 1000)
    .events.filter((e) => recordingId === undefined || e.recordingId === recordingId)
    .map((e) => `${e.type}@${e.revision}`);
}
