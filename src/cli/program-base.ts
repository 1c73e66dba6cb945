// The top level of the CLI, shared by the full program (program.ts) and the one `reclib serve`
// starts with (serve-program.ts).
import { Command } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { handleOutputErrors } from './output-errors';
import { jsonRequested, print } from './output';

/** The program without its commands: name, description, output, exit codes and --version. */
export function programBase(): Command {
  const program = new Command('reclib')
    .description('reclib: a self-hosted recording library server (clips, memos, search, webhooks) on one SQLite file')
    .showHelpAfterError()
    // With --json a usage error is one JSON object on stderr, without the help text (docs/decisions.md §12).
    .configureOutput({
      writeErr: (s) => (jsonRequested() ? undefined : process.stderr.write(s)),
      outputError: (s) => (jsonRequested() ? process.stderr.write(JSON.stringify({ error: { code: 'usage', message: s.replace(/^error: /, '').trim() } }) + '\n') : process.stderr.write(s)),
    });
  // Before any command runs: a stdout or stderr that cannot be written ends it without a stack trace (serve: keeps serving).
  program.hook('preAction', () => handleOutputErrors());
  program.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : 2);
  });
  program.option('-V, --version', 'print the version of reclib').on('option:version', () => {
    print({ json: jsonRequested() }, { version: pkg.version }, pkg.version);
    process.exit(0);
  });
  return program;
}
