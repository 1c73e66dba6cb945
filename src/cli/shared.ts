// What every admin command is built from: the --db/--json options, a runtime opened for one
// action and closed after it, and whole-number options. In a file of their own so that command
// modules do not import program.ts, which imports them.
import fs from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig, type ConfigFlags } from '../config';
import { openRuntime } from '../runtime';
import type { Services } from '../services';
import { fail, type CommonOpts } from './output';

/** Adds --db and --json to a leaf command. */
export const common = (cmd: Command): Command =>
  cmd
    .option('--db <file>', 'SQLite database file (env RECLIB_DB, default ./data/reclib.db)')
    .option('--json', 'print exactly one JSON object on stdout');

/**
 * Runs an admin action on a freshly opened runtime and closes it afterwards. With `existingDb`,
 * a database file that does not exist is an error instead of being created empty (backup: a copy
 * of a mistyped path must not succeed as an empty library).
 */
export async function withServices(opts: CommonOpts, action: (s: Services) => void | Promise<void>, options: { existingDb?: boolean } = {}): Promise<void> {
  let services: Services | undefined;
  try {
    const config = loadConfig({ db: opts.db, masterSecretFile: opts.masterSecretFile, webhookAllow: opts.webhookAllow } satisfies ConfigFlags);
    if (options.existingDb && config.db !== ':memory:' && !fs.existsSync(config.db)) {
      throw new Error(`database file ${config.db} does not exist; check --db (or RECLIB_DB)`);
    }
    services = openRuntime(config);
    await action(services);
  } catch (e) {
    fail(e);
  } finally {
    services?.core.db.close();
  }
}

export const intOption = (flag: string, description: string) =>
  new Option(flag, description).argParser((v: string) => {
    // InvalidArgumentError: commander reports it as a usage error (exit 2), not a crash.
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${flag.split(' ')[0]} must be a whole number`);
    return Number(v);
  });
