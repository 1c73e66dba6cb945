// The request headers that carry write preconditions, read and checked in one place for every
// v1 and v2 route: If-Match (docs/decisions.md §5, at most 100 characters) and Idempotency-Key.
import type { Context } from 'hono';
import { invalid } from '../errors';
import { parseIfMatch } from './if-match';
import { requestHeader } from './node-request';

/** The limit for If-Match values (docs/decisions.md §20) (checked on every route that takes one). */
export const IF_MATCH_MAX = 100;

/** The revision named by If-Match: 428 when required and missing, 400 when malformed or too long. */
export function ifMatch(c: Context, required: true): number;
export function ifMatch(c: Context, required: false): number | undefined;
export function ifMatch(c: Context, required: boolean): number | undefined {
  return parseIfMatch(requestHeader(c, 'if-match'), { required, maxLength: IF_MATCH_MAX });
}

/**
 * The required If-Match of a write to one resource. Without the header, `lookup` runs first, so a
 * write to an unknown or deleted resource answers 404/410 (no If-Match could make it succeed)
 * rather than 428, which would send the client to read it again for nothing.
 */
export function ifMatchFor(c: Context, lookup: () => unknown): number {
  const expected = ifMatch(c, false);
  if (expected !== undefined) return expected;
  lookup();
  return ifMatch(c, true);
}

/** The Idempotency-Key header, required and 1-`max` characters; `what` names what it retries. */
export function idempotencyKey(c: Context, max: number, what: string): string {
  const key = requestHeader(c, 'idempotency-key');
  if (key === undefined) throw invalid(`Idempotency-Key header is required: a unique value per ${what}, reused only to retry it`);
  if (key.length < 1 || key.length > max) throw invalid(`Idempotency-Key header must be 1-${max} characters`);
  return key;
}
