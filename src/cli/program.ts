// The admin CLI (docs/decisions.md §2). Commands call services on the same database file the server
// uses (WAL, so they may run while it runs); nothing goes over HTTP.
import { Command } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { registerAdminCommands } from './admin-commands';
import { registerBackupCommands } from './backup-commands';
import { registerExportCommand } from './export-command';
import { jsonRequested, print } from './output';
import { registerCaptureCommands } from './capture-commands';
import { registerListenCommand } from './listen-command';
import { registerMcpCommand } from './mcp-command';
import { registerServe } from './serve-command';
import { registerWebhookCommands } from './webhook-commands';

export function buildProgram(): Command {
  const program = new Command('reclib')
    .description('reclib: a self-hosted recording library server (clips, memos, search, webhooks) on one SQLite file')
    .showHelpAfterError()
    // With --json a usage error is one JSON object on stderr, without the help text (docs/decisions.md §12).
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
  registerMcpCommand(program);
  registerCaptureCommands(program);
  registerListenCommand(program);
  return program;
}
