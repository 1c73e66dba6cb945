// Writes the writer thread runs as calls of the service layer (docs/architecture.md, "The writer
// and its threads"). Most writes are handed over as requests (forward-write.ts): the thread's own
// copy of the app parses and answers them. For the hottest one, a create, that meant a WHATWG
// Request, Hono's routing, the body's JSON and its validation, a Response and its bytes on the
// writer thread, on top of the same request's parsing on the main thread: ~90 µs of CPU per
// create, against ~300 µs for the create itself (bench/results-notes.md, 2026-11-26). A route that
// takes this way (RouteSpec.writerCall) parses, checks and answers on the main thread as it does
// in process, and only the service call crosses: its arguments and result are plain data.
import { AppError, type ErrorCode } from '../errors';
import type { Services } from '../services';
import type { Principal } from '../permissions';
import type { CreateInput } from '../services/recording-input';

/** The calls, by name; each runs on the writer thread's services. */
export const WRITE_CALLS = {
  createRecording: (s: Services, principal: Principal, input: CreateInput, idempotencyKey: string, unchecked?: boolean) =>
    s.recordings.createGrouped(principal, input, idempotencyKey, unchecked),
};

export type WriteCallName = keyof typeof WRITE_CALLS;
type Call<K extends WriteCallName> = (typeof WRITE_CALLS)[K];
export type WriteCallArgs<K extends WriteCallName> = Parameters<Call<K>> extends [Services, ...infer A] ? A : never;
export type WriteCallResult<K extends WriteCallName> = Awaited<ReturnType<Call<K>>>;

/** What runs a call on the writer thread (src/writer-thread.ts; HttpDeps.writes). */
export interface WriteCaller {
  call<K extends WriteCallName>(name: K, ...args: WriteCallArgs<K>): Promise<WriteCallResult<K>>;
}

/** Runs a call on the writer thread when the server has one (`writes`), else here: the same code either way. */
export function runWrite<K extends WriteCallName>(services: Services, writes: WriteCaller | undefined, name: K, ...args: WriteCallArgs<K>): Promise<WriteCallResult<K>> {
  if (writes) return writes.call(name, ...args);
  const call = WRITE_CALLS[name] as unknown as (s: Services, ...a: WriteCallArgs<K>) => WriteCallResult<K> | Promise<WriteCallResult<K>>;
  return Promise.resolve().then(() => call(services, ...args));
}

/**
 * Posts `items` (calls, or their outcomes) in one message. When they do not clone
 * (DataCloneError): one message each, and `cannot` is told of each item that still does not, so a
 * bad argument or result fails only its own call.
 */
export function postBatch<T>(items: T[], post: (items: T[]) => void, cannot: (item: T, e: unknown) => void): void {
  try {
    post(items);
    return;
  } catch {
    // one at a time, below
  }
  for (const item of items) {
    try {
      post([item]);
    } catch (e) {
      cannot(item, e);
    }
  }
}

/** A call's error as it crosses (structured clone keeps neither the class nor own fields such as code). */
export interface CallError {
  app: boolean;
  name: string;
  message: string;
  /** The AppError's code, or the driver's (SQLITE_BUSY) for another error. */
  code?: string;
  headers?: Record<string, string>;
  /** Where another error was thrown (its stack's first frame), for the app's log line. */
  where?: string;
}

export function callError(e: unknown): CallError {
  if (e instanceof AppError) return { app: true, name: e.name, message: e.message, code: e.code, headers: e.headers };
  const err = e as { name?: unknown; message?: unknown; code?: unknown };
  return {
    app: false,
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : 'a non-Error value was thrown',
    ...(typeof err?.code === 'string' ? { code: err.code } : {}),
    ...(e instanceof Error && e.stack ? { where: e.stack.split('\n')[1] ?? '' } : {}),
  };
}

/** The error again, on the main thread: an AppError is answered as in process; another goes to the app's onError as it would have. */
export function callErrorAgain(e: CallError): Error {
  if (e.app) return new AppError(e.code as ErrorCode, e.message, e.headers);
  const err = new Error(e.message) as Error & { code?: string };
  err.name = e.name;
  if (e.code !== undefined) err.code = e.code;
  // onError logs the first frame: the writer thread's, not this function's.
  err.stack = `${e.name}: ${e.message}\n${e.where ?? '    at (the writer thread)'}`;
  return err;
}
