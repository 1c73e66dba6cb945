// `reclib webhooks create|list|disable` (docs/decisions.md §2): the same service as POST/GET/DELETE
// /api/v2/webhooks, on the database file directly.
import type { Command } from 'commander';
import { webhookJson } from '../services/webhooks';
import { print, table, type CommonOpts } from './output';
import { commaList, common, withServices } from './shared';

interface CreateOpts extends CommonOpts {
  account: string;
  url: string;
  events?: string;
  payloadMode?: string;
  rulePrefix?: string;
  ruleCaptureInput?: string;
  ruleKind?: string;
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('manage webhook subscriptions');
  common(webhooks.command('create').description('create a webhook subscription; the signing secret is shown once'))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--url <url>', 'destination: public https on port 443, or a --webhook-allow entry')
    .option('--events <list>', 'comma list, e.g. recording.created,recording.updated,recording.deleted')
    .option('--payload-mode <mode>', 'text: text deliveries (v1)')
    .option('--rule-prefix <prefix>', 'capture rule: transcript starts with this (case-insensitive)')
    .option('--rule-capture-input <input>', 'capture rule: the input that started the capture, e.g. hold')
    .option('--rule-kind <kind>', 'capture rule: clip or memo')
    .option('--webhook-allow <list>', 'as for serve: hostnames and CIDRs exempt from the public-HTTPS-443 rule (RECLIB_WEBHOOK_ALLOW)')
    // The printed secret is derived from the master secret: it must be the file the server uses.
    .option('--master-secret-file <file>', 'as for serve: the master secret the server uses (RECLIB_MASTER_SECRET_FILE; default <db>.secret)')
    .action((opts: CreateOpts) =>
      withServices(opts, async (s) => {
        s.auth.account(opts.account);
        const hasRules = [opts.rulePrefix, opts.ruleCaptureInput, opts.ruleKind].some((x) => x !== undefined);
        const r = await s.webhooks.create(opts.account, {
          url: opts.url,
          events: opts.events === undefined ? undefined : commaList(opts.events),
          payloadMode: opts.payloadMode,
          rules: hasRules ? { prefix: opts.rulePrefix, captureInput: opts.ruleCaptureInput, kind: opts.ruleKind } : undefined,
        });
        print(opts, r, `created webhook ${r.webhook.id} → ${r.webhook.url} (${r.webhook.events.join(',')})\nsecret (shown once): ${r.secret}`);
      }),
    );
  common(webhooks.command('list').description('list active webhook subscriptions (both payload modes)'))
    .requiredOption('--account <id>', 'account id')
    .action((opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        s.auth.account(opts.account);
        const rows = s.webhooks.listActive(opts.account);
        // The rules in the table too: two text subscriptions to one receiver differ only there.
        const shown = rows.map((w) => ({ ...w, rules: w.rules === null ? null : Object.entries(w.rules).map(([k, v]) => `${k}=${String(v)}`).join(',') }));
        print(opts, { webhooks: rows }, table(shown, ['id', 'url', 'events', 'payloadMode', 'rules', 'createdAt']));
      }),
    );
  common(webhooks.command('disable').description('disable a subscription and cancel its queued deliveries'))
    .requiredOption('--account <id>', 'account id')
    .argument('<webhookId>', 'webhook id (wh_…)')
    .action((webhookId: string, opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        s.webhooks.disable(opts.account, webhookId);
        print(opts, { webhook: webhookJson(s.webhooks.get(opts.account, webhookId)) }, `disabled ${webhookId}`);
      }),
    );
}
