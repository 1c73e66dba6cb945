// The admin CLI (docs/decisions.md §2). Commands call services on the same database file the server
// uses (WAL, so they may run while it runs); nothing goes over HTTP.
import type { Command } from 'commander';
import { registerAdminCommands } from './admin-commands';
import { registerBackupCommands } from './backup-commands';
import { registerExportCommand } from './export-command';
import { registerCaptureCommands } from './capture-commands';
import { registerListenCommand } from './listen-command';
import { registerMcpCommand } from './mcp-command';
import { programBase } from './program-base';
import { registerServe } from './serve-command';
import { registerWebhookCommands } from './webhook-commands';

export function buildProgram(): Command {
  const program = programBase();
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
