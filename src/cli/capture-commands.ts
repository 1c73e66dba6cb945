// `reclib captures simulate` (docs/decisions.md §12): try capture rules and text webhooks without a device.
// The capture goes through the same services as the v1 app API (services/capture-simulator.ts);
// the deliveries it queues are sent by the running server's scheduler.
import type { Command } from 'commander';
import { simulateCapture } from '../services/capture-simulator';
import { recordingJson } from '../services/recording-model';
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
    .action((opts: SimulateOpts) =>
      withServices(
        opts,
        (s) => {
          const row = simulateCapture(s, { accountId: opts.account, deviceId: opts.device, input: opts.input, transcript: opts.transcript });
          const deliveries = s.webhooks.deliveries
            .forRecording(opts.account, row.id)
            .map((d) => ({ id: d.id, webhookId: d.webhook_id, type: JSON.parse(d.body ?? '{}').type as string, trigger: d.kind, status: d.status }));
          const fired = deliveries.filter((d) => d.trigger === 'rule');
          const text = [
            `captured ${row.id}: a ${row.type} from ${opts.device} (${opts.input}), ${row.status}, revision ${row.revision}`,
            `transcript: ${row.transcript}`,
            fired.length
              ? `capture rules fired: ${fired.map((d) => `${d.webhookId} (delivery ${d.id}, ${d.status})`).join(', ')}; the running server sends them`
              : 'no capture rule fired',
          ].join('\n');
          print(opts, { recording: recordingJson(row), deliveries }, text);
        },
      ),
    );
}
