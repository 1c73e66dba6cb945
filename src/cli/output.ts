// CLI output: with --json exactly one JSON object on stdout; otherwise friendly text.
// Errors go to stderr with a non-zero exit code.
import { AppError } from '../errors';
import { ConfigError } from '../config';

export interface CommonOpts {
  db?: string;
  json?: boolean;
  /** Only on commands that need them (webhooks create): the same settings as serve's flags. */
  masterSecretFile?: string;
  webhookAllow?: string;
}

export function print(opts: CommonOpts, json: object, text: string): void {
  process.stdout.write(opts.json ? JSON.stringify(json) + '\n' : text + '\n');
}

export function fail(e: unknown): never {
  if (e instanceof AppError) {
    process.stderr.write(`reclib: ${e.message} (${e.code})\n`);
    process.exit(1);
  }
  if (e instanceof ConfigError) {
    process.stderr.write(`reclib: ${e.message}\n`);
    process.exit(2);
  }
  const err = e as Error & { code?: string };
  process.stderr.write(`reclib: ${err.code === 'SQLITE_BUSY' ? 'the database stayed locked; retry' : err.message}\n`);
  process.exit(1);
}

export const table = (rows: Array<Record<string, unknown>>, cols: string[]): string => {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
};
