// CLI output: with --json exactly one JSON object on stdout; otherwise friendly text.
// Errors go to stderr with a non-zero exit code (docs/decisions.md §12): 2 for usage and configuration
// errors, 1 for everything else; with --json as {"error":{"code","message"}}.
import { AppError } from '../errors';
import { ConfigError } from '../config';
import { ForeignDatabaseError } from '../db/ownership';

export interface CommonOpts {
  db?: string;
  json?: boolean;
  /** Only on commands that need them (webhooks create): the same settings as serve's flags. */
  masterSecretFile?: string;
  webhookAllow?: string;
  durability?: string;
  /** captures simulate: the origin its text deliveries' fetchUrl is built on, as the server's. */
  publicUrl?: string;
}

/** A CLI failure with its own code (e.g. database_in_use) and exit status. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Whether this run asked for JSON (also for errors raised before a command's options are parsed). */
export const jsonRequested = (): boolean => process.argv.includes('--json');

export function print(opts: CommonOpts, json: object, text: string): void {
  process.stdout.write(opts.json ? JSON.stringify(json) + '\n' : text + '\n');
}

/** Writes an error the way this run asked for (text or JSON) and exits with `exitCode`. */
export function report(code: string, message: string, exitCode: 1 | 2, options: { codeInText?: boolean } = {}): never {
  if (jsonRequested()) process.stderr.write(JSON.stringify({ error: { code, message } }) + '\n');
  else process.stderr.write(`reclib: ${message}${options.codeInText ? ` (${code})` : ''}\n`);
  process.exit(exitCode);
}

export function fail(e: unknown): never {
  if (e instanceof AppError) report(e.code, e.message, 1, { codeInText: true });
  if (e instanceof ConfigError) report('invalid_configuration', e.message, 2);
  if (e instanceof CliError) report(e.code, e.message, e.exitCode);
  if (e instanceof ForeignDatabaseError) report('not_a_reclib_database', e.message, 1);
  const err = e as Error & { code?: string };
  if (err.code === 'SQLITE_BUSY') report('database_busy', 'the database stayed locked; retry', 1);
  if (err.code === 'SQLITE_NOTADB') report('not_a_database', err.message, 1);
  report(typeof err.code === 'string' && err.code.startsWith('SQLITE_') ? 'database_error' : 'failed', err.message, 1);
}

/** Columns named …At hold Unix ms: shown as ISO 8601 (UTC) in tables. */
const cell = (col: string, v: unknown): string => {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'number' && col.endsWith('At')) return new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return Array.isArray(v) ? v.join(',') : String(v);
};

export const table = (rows: Array<Record<string, unknown>>, cols: string[]): string => {
  if (rows.length === 0) return '(none)';
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(c, r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(c, r[c]))))].join('\n');
};
