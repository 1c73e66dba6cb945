// `reclib captures simulate` (docs/decisions.md §12): try capture rules and text webhooks without a device.
// The capture goes through the same services as the v1 app API (services/capture-simulator.ts);
// the deliveries it queues are sent by the running server's scheduler.
import type { Command } from 'commander';
import { simulateCapture } from '../services/capture-simulator';
import { recordingJson } from '../services/recording-model';
import { fetchUrl } from '../services/text-payload';
import { print, type CommonOpts } from './output';
import { common, withServices } from './shared';

interface SimulateOpts extends CommonOpts {
  account: string;
  device: string;
  input: string;
  transcript: string;
}

export function registerCaptureCommands(program: Command): void {
  const captures = program.command('captures').description('device captures');
  common(
    captures
      .command('simulate')
      .description('make a native capture as a device app does (pending capture, then its transcript), so capture rules and text webhooks fire'),
  )
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--device <id>', 'a device of the account (reclib devices list)')
    .requiredOption('--input <input>', 'the input that started the capture: hold, doubleTap, tripleTap (ring), recordButton (pin, pendant), appRecord')
    .requiredOption('--transcript <text>', 'what was said, e.g. "todo buy milk"')
    .option('--public-url <url>', "the server's public origin, which text deliveries' fetchUrl is built on (RECLIB_PUBLIC_URL; default http://127.0.0.1:8080)")
    .action((opts: SimulateOpts) =>
      withServices(
        opts,
        (s) => {
          const row = simulateCapture(s, { accountId: opts.account, deviceId: opts.device, input: opts.input, transcript: opts.transcript });
          const rows = s.webhooks.deliveries.forRecording(opts.account, row.id);
          const bodies = rows.map((d) => JSON.parse(d.body ?? '{}') as { type: string; fetchUrl?: string });
          const deliveries = rows.map((d, i) => ({ id: d.id, webhookId: d.webhook_id, type: bodies[i]!.type, trigger: d.kind, status: d.status }));
          const fired = deliveries.filter((d) => d.trigger === 'rule');
          const text = [
            `captured ${row.id}: a ${row.type} from ${opts.device} (${opts.input}), ${row.status}, revision ${row.revision}`,
            `transcript: ${row.transcript}`,
            fired.length
              ? `capture rules fired: ${fired.map((d) => `${d.webhookId} (delivery ${d.id}, ${d.status})`).join(', ')}; the running server sends them`
              : 'no capture rule fired',
            // The text deliveries were written here, with this command's public URL, not the server's.
            ...(bodies.some((b) => b.fetchUrl !== undefined) ? [`text deliveries' fetchUrl: ${fetchUrl(s.core.config, row.id)} (not the server's public URL? pass it as --public-url)`] : []),
          ].join('\n');
          print(opts, { recording: recordingJson(row), deliveries }, text);
        },
      ),
    );
}
