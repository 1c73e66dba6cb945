// The admin CLI (CONTRACT §2). Commands call services on the same database file the server
// uses (WAL, so they may run while it runs); nothing goes over HTTP.
import { Command } from 'commander';
import { registerAdminCommands } from './admin-commands';
import { registerServe } from './serve-command';
import { registerWebhookCommands } from './webhook-commands';

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
  return program;
}
