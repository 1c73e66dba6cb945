// The admin CLI (CONTRACT §2). Commands call services on the same database file the server
// uses (WAL, so they may run while it runs); nothing goes over HTTP.
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { loadConfig, type ConfigFlags } from '../config';
import { openRuntime } from '../runtime';
import type { Services } from '../services';
import { registerAdminCommands } from './admin-commands';
import { registerBackupCommands } from './backup-commands';
import { registerExportCommand } from './export-command';
import { CliError, fail, jsonRequested, print, type CommonOpts } from './output';
import { registerServe } from './serve-command';
import { registerWebhookCommands } from './webhook-commands';

/** Adds --db, --durability and --json to a leaf command. */
export const common = (cmd: Command): Command =>
  cmd
    .option('--db <file>', 'SQLite database file (env RECLIB_DB, default ./data/reclib.db)')
    .option('--durability <mode>', 'full | normal, as for serve (RECLIB_DURABILITY; default full)')
    .option('--json', 'print exactly one JSON object on stdout (errors as {"error":{"code","message"}} on stderr)');

/**
 * Opens the runtime an admin command works on. The database file must exist (CONTRACT §12: a
 * mistyped --db is an error, and nothing is created, not even the master secret) unless
 * `createDb` (accounts create, the first command of a new library).
 */
export function openAdminRuntime(opts: CommonOpts, options: { createDb?: boolean } = {}): Services {
  const config = loadConfig({ db: opts.db, masterSecretFile: opts.masterSecretFile, webhookAllow: opts.webhookAllow, durability: opts.durability } satisfies ConfigFlags);
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

export function buildProgram(): Command {
  const program = new Command('reclib')
    .description('reclib: a self-hosted recording library server (clips, memos, search, webhooks) on one SQLite file')
    .showHelpAfterError()
    // With --json a usage error is one JSON object on stderr, without the help text (CONTRACT §12).
    .configureOutput({
      writeErr: (s) => (jsonRequested() ? undefined : process.stderr.write(s)),
      outputError: (s) => (jsonRequested() ? process.stderr.write(JSON.stringify({ error: { code: 'usage', message: s.replace(/^error: /, '').trim() } }) + '\n') : process.stderr.write(s)),
    });
  program.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });
  program.option('-V, --version', 'print the version of reclib').on('option:version', () => {
    print({ json: jsonRequested() }, { version: pkg.version }, pkg.version);
    process.exit(0);
  });
  registerServe(program);
  registerAdminCommands(program);
  registerWebhookCommands(program);
  registerBackupCommands(program);
  registerExportCommand(program);
  return program;
}

export const intOption = (flag: string, description: string) =>
  new Option(flag, description).argParser((v: string) => {
    // InvalidArgumentError: commander reports it as a usage error (exit 2), not a crash.
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${flag.split(' ')[0]} must be a whole number`);
    return Number(v);
  });
