// The admin CLI (CONTRACT §2). Commands call services on the same database file the server
// uses (WAL, so they may run while it runs); nothing goes over HTTP.
import fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type ConfigFlags } from '../config';
import { openRuntime } from '../runtime';
import type { Services } from '../services';
import { registerAdminCommands } from './admin-commands';
import { registerCaptureCommands } from './capture-commands';
import { registerListenCommand } from './listen-command';
import { registerMcpCommand } from './mcp-command';
import { fail, type CommonOpts } from './output';
import { registerServe } from './serve-command';
import { registerWebhookCommands } from './webhook-commands';

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

export function buildProgram(): Command {
  const program = new Command('reclib')
    .description('reclib: a self-hosted recording library server (clips, memos, search, webhooks) on one SQLite file')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  program.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });
  registerServe(program);
  registerAdminCommands(program);
  registerWebhookCommands(program);
  registerMcpCommand(program);
  registerCaptureCommands(program);
  registerListenCommand(program);
  return program;
}

export const intOption = (flag: string, description: string) =>
  new Option(flag, description).argParser((v: string) => {
    // InvalidArgumentError: commander reports it as a usage error (exit 2), not a crash.
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${flag.split(' ')[0]} must be a whole number`);
    return Number(v);
  });
