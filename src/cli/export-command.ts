// `reclib export --account ID --to DIR [--format markdown|json]` (docs/decisions.md §11).
import { Option, type Command } from 'commander';
import { exportRecordings, ExportError, type ExportFormat } from '../export/exporter';
import { WriteError } from '../files/write-all';
import { RecordingExportStore } from '../store/recording-export-store';
import { CliError, print, type CommonOpts } from './output';
import { common, withServices } from './shared';

/** A one-line progress bar on stderr, redrawn at most every 100 ms. */
function progressBar(stream: NodeJS.WriteStream): { update(done: number, total: number): void; end(): void } {
  let last = 0;
  let drawn = false;
  const draw = (done: number, total: number) => {
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    stream.write(`\rexporting [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
    drawn = true;
  };
  let lastArgs: [number, number] = [0, 0];
  return {
    update(done, total) {
      lastArgs = [done, total];
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      draw(done, total);
    },
    end() {
      if (drawn || lastArgs[1] > 0) {
        draw(...lastArgs);
        stream.write('\n');
      }
    },
  };
}

export function registerExportCommand(program: Command): void {
  common(program.command('export').description("write an account's live recordings to a folder: Markdown notes (YYYY/MM/<id>.md) or recordings.jsonl"))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--to <dir>', 'destination folder (created 0700 if missing; a rerun updates it)')
    .addOption(new Option('--format <format>', 'markdown: one note per recording; json: one v2 recording a line').choices(['markdown', 'json']).default('markdown'))
    .action((opts: CommonOpts & { account: string; to: string; format: ExportFormat }) =>
      withServices(opts, (s) => {
        s.auth.account(opts.account);
        // A bar only for a person watching: not with --json, not when stderr is a file or a pipe.
        const bar = !opts.json && process.stderr.isTTY ? progressBar(process.stderr) : undefined;
        try {
          const r = exportRecordings(new RecordingExportStore(s.core.db), {
            accountId: opts.account,
            dir: opts.to,
            format: opts.format,
            onProgress: bar ? (done, total) => bar.update(done, total) : undefined,
          });
          bar?.end();
          print(opts, { exported: r.exported, removed: r.removed }, `exported ${r.exported} recordings to ${opts.to}${r.removed ? `, removed ${r.removed} of deleted recordings` : ''}`);
        } catch (e) {
          bar?.end();
          // A failed write ("cannot write DIR/recordings.jsonl: no space left on device") leaves the file it replaces as it was.
          throw e instanceof ExportError || e instanceof WriteError ? new CliError('export_failed', e.message) : e;
        }
      }),
    );
}
