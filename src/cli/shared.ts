// What every admin command is built from: the --db/--durability/--json options, a runtime opened
// for one action and closed after it, and whole-number options. In a file of their own so that
// command modules do not import program.ts, which imports them.
import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_DB, loadConfig, type ConfigFlags } from '../config';
import { openRuntime } from '../runtime';
import type { Services } from '../services';
import { CliError, fail, type CommonOpts } from './output';

/** A comma list option (`a, b,,c` → a, b, c). */
export const commaList = (s: string): string[] => s.split(',').map((x) => x.trim()).filter(Boolean);

/** Adds --db, --durability and --json to a leaf command. */
export const common = (cmd: Command): Command =>
  cmd
    .option('--db <file>', `SQLite database file (env RECLIB_DB, default ${DEFAULT_DB})`)
    .option('--durability <mode>', 'full | normal, as for serve (RECLIB_DURABILITY; default full)')
    .option('--json', 'print exactly one JSON object on stdout (errors as {"error":{"code","message"}} on stderr)');

/**
 * Opens the runtime an admin command works on. The database file must exist (docs/decisions.md §12: a
 * mistyped --db is an error, and nothing is created, not even the master secret) unless
 * `createDb` (accounts create, the first command of a new library).
 */
export function openAdminRuntime(opts: CommonOpts, options: { createDb?: boolean } = {}): Services {
  const config = loadConfig({ db: opts.db, masterSecretFile: opts.masterSecretFile, webhookAllow: opts.webhookAllow, durability: opts.durability, publicUrl: opts.publicUrl } satisfies ConfigFlags);
  if (!options.createDb && config.db !== ':memory:' && !fs.existsSync(config.db)) {
    throw new CliError('database_not_found', `database file ${path.resolve(config.db)} does not exist; check --db (or RECLIB_DB)`);
  }
  return openRuntime(config);
}

/** Runs an admin action on a freshly opened runtime (see openAdminRuntime) and closes it afterwards. */
export async function withServices(opts: CommonOpts, action: (s: Services) => void | Promise<void>, options: { createDb?: boolean } = {}): Promise<void> {
  let services: Services | undefined;
  try {
    services = openAdminRuntime(opts, options);
    await action(services);
  } catch (e) {
    fail(e);
  } finally {
    services?.core.db.close();
  }
}

/** A whole-number option from `min` to `max`; anything else is a usage error (exit 2) naming the option and its range. */
export const intOption = (flag: string, description: string, min: number, max: number) =>
  new Option(flag, description).argParser((v: string) => {
    // InvalidArgumentError: commander reports it as a usage error (exit 2), not a crash.
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!(n >= min && n <= max)) throw new InvalidArgumentError(`${flag.split(' ')[0]} must be a whole number from ${min} to ${max}`);
    return n;
  });
