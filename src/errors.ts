// The contract's error codes (docs/decisions.md §4) and the one map from code to HTTP status.
// Nothing else in the code base decides a status: services throw AppError, the HTTP edge maps it.

export const errorStatus = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  session_required: 403,
  wrong_application: 403,
  not_found: 404,
  idempotency_conflict: 409,
  revision_conflict: 409,
  immutable_field: 409,
  not_editable: 409,
  limit_reached: 409,
  webhook_disabled: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  precondition_required: 428,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After for 429. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.headers = headers;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export const invalid = (message: string) => new AppError('invalid_request', message);
export const notFound = (what: string) => new AppError('not_found', `${what} not found`);

/** An error in one line for a log: "TypeError: first line of its message" (a non-Error as text). */
export const errorLine = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message.split('\n')[0]}` : String(e));
