// The server's log (docs/decisions.md §11): one line per request, one per delivery outcome, and the start
// and stop lines, as readable text or (--log-format json) one JSON object a line for log shippers.
//
// What goes in is chosen by the callers, field by field: route templates rather than paths (a path
// holds ids, a query string may hold a token), ids and statuses, never a header, a body, a secret
// or a transcript. Nothing here takes free text from a request.
//
// Request lines are buffered and written together at most REQUEST_FLUSH_MS later: a write to a pipe
// or file is a system call, which at one per turn of the event loop (at a few thousand get-by-id a
// second, once per request) was ~15 µs of a ~260 µs get-by-id (bench CPU profile). Every other
// line (start, stop, delivery outcomes, warnings) writes at once, with what is buffered before it,
// so the order holds. stdout and stderr are synchronous on Linux for files and pipes, so flush()
// before exit loses nothing.
export type LogFormat = 'text' | 'json';
export type LogLevel = 'info' | 'warn' | 'error';
export type LogFields = Record<string, string | number | boolean | null | readonly string[] | undefined>;

export interface RequestLine {
  requestId: string | null;
  method: string;
  /** The route template (`/api/v2/recordings/{id}`), or `unmatched`. */
  route: string;
  status: number;
  ms: number;
}

export interface Logger {
  readonly format: LogFormat;
  /** `msg` is a sentence for people; `fields` are added as they are in JSON, after `msg` in text. */
  log(level: LogLevel, msg: string, fields?: LogFields): void;
  /** As log(), for something that happened (a delivery outcome): in text the line starts with the time. */
  event(level: LogLevel, msg: string, fields?: LogFields): void;
  request(line: RequestLine): void;
  /** Writes what is buffered now (before exit). */
  flush(): void;
}

/**
 * `ms` (Unix time) in ISO 8601, as toISOString gives it. Every log line starts with the time, and
 * toISOString was ~4 µs of a get-by-id (CPU profile of the bench, loaded 2-core machine: at a few
 * thousand requests a second most fall in a millisecond of their own, so a per-millisecond cache
 * rarely hit). The text up to the second is formatted once per second and the milliseconds are
 * appended (~0.1 µs). test/observe/log-time.test.ts compares it with toISOString.
 */
let secondStart = Number.NaN;
let secondText = '';
export function isoTime(ms: number): string {
  const millis = ((ms % 1000) + 1000) % 1000;
  const second = ms - millis;
  if (second !== secondStart) {
    secondStart = second;
    // "2026-11-23T17:31:05." (a year past 9999 is longer, so cut from the end: "000Z")
    secondText = new Date(second).toISOString().slice(0, -4);
  }
  return `${secondText}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/** How long a request line may wait for others to be written with (a person tailing the log does not see 20 ms). */
export const REQUEST_FLUSH_MS = 20;
/** How many request lines may wait (~150 bytes each): a burst is written in pieces of this size. */
const REQUEST_FLUSH_LINES = 256;

const nowIso = (): string => isoTime(Date.now());

const textValue = (value: NonNullable<LogFields[string]>): string => {
  const text = Array.isArray(value) ? value.join(',') || 'none' : String(value);
  return /[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text;
};

/** `write` receives whole lines, each ending in a newline (several at once when buffered). */
export function createLogger(format: LogFormat, write: (chunk: string) => void): Logger {
  let buffered: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffered.length === 0) return;
    const chunk = buffered.join('');
    buffered = [];
    write(chunk);
  };
  /** A request line: written with the next line that is not, or REQUEST_FLUSH_MS later, or once REQUEST_FLUSH_LINES wait. */
  const emitRequest = (line: string): void => {
    buffered.push(line);
    if (buffered.length >= REQUEST_FLUSH_LINES) flush();
    else timer ??= setTimeout(flush, REQUEST_FLUSH_MS);
  };
  const emit = (line: string): void => {
    buffered.push(line);
    flush();
  };
  const line = (stamped: boolean, level: LogLevel, msg: string, fields: LogFields = {}): void => {
    if (format === 'json') {
      emit(`${JSON.stringify({ time: nowIso(), level, msg, ...fields })}\n`);
      return;
    }
    let text = `${stamped ? `${nowIso()} ` : ''}${level === 'info' ? '' : `${level}: `}${msg}`;
    for (const [key, value] of Object.entries(fields)) if (value !== undefined && value !== null) text += ` ${key}=${textValue(value)}`;
    emit(`${text}\n`);
  };
  return {
    format,
    flush,
    log: (level, msg, fields) => line(false, level, msg, fields),
    event: (level, msg, fields) => line(true, level, msg, fields),
    request(r) {
      const ms = Math.round(r.ms * 100) / 100;
      if (format === 'json') {
        const level: LogLevel = r.status >= 500 ? 'error' : 'info';
        // Built by hand, in the contract's key order: a request line is written for every request.
        const id = r.requestId === null ? 'null' : JSON.stringify(r.requestId);
        emitRequest(`{"time":"${nowIso()}","level":"${level}","msg":"request","requestId":${id},"method":${JSON.stringify(r.method)},"route":${JSON.stringify(r.route)},"status":${r.status},"ms":${ms}}\n`);
      } else {
        emitRequest(`${nowIso()} ${r.method} ${r.route} ${r.status} ${ms}ms ${r.requestId ?? '-'}\n`);
      }
    },
  };
}
