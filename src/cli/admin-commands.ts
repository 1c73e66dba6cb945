// Admin commands: accounts, sessions, keys, devices (docs/decisions.md §2, §12).
import type { Command } from 'commander';
import { checkAccountInput } from '../services/auth';
import { fail, print, table, type CommonOpts } from './output';
import { commaList, common, intOption, withServices } from './shared';

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
};

export function registerAdminCommands(program: Command): void {
  const accounts = program.command('accounts').description('manage accounts');
  common(accounts.command('create').description('create an account'))
    .requiredOption('--name <name>', 'account name')
    .option('--password-stdin', 'read a login password (for POST /api/session) from standard input')
    .action(async (opts: CommonOpts & { name: string; passwordStdin?: boolean }) => {
      // Read and checked before the database is opened: a refused password leaves no new file behind.
      let password: string | undefined;
      try {
        password = opts.passwordStdin ? await readStdin() : undefined;
        checkAccountInput(opts.name, password);
      } catch (e) {
        fail(e);
      }
      await withServices(opts, (s) => {
        const a = s.auth.createAccount(opts.name, password);
        print(opts, { account: { id: a.id, name: a.name } }, `created account ${a.id} (${a.name})`);
      }, { createDb: true });
    });
  common(accounts.command('set-password').description('set the login password (for POST /api/session) of an account'))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--password-stdin', 'read the new password from standard input')
    .action((opts: CommonOpts & { account: string }) =>
      withServices(opts, async (s) => {
        s.auth.setPassword(opts.account, await readStdin());
        print(opts, { account: { id: opts.account, passwordSet: true } }, `password set for ${opts.account}`);
      }),
    );
  common(accounts.command('list').description('list accounts')).action((opts: CommonOpts) =>
    withServices(opts, (s) => {
      const rows = s.auth.accounts().map((a) => ({ id: a.id, name: a.name, createdAt: a.created_at }));
      print(opts, { accounts: rows }, table(rows, ['id', 'name', 'createdAt']));
    }),
  );

  const sessions = program.command('sessions').description('manage sign-in sessions');
  common(sessions.command('create').description('create a session token for an account'))
    .requiredOption('--account <id>', 'account id')
    .addOption(intOption('--ttl-hours <n>', 'lifetime in hours, 1-8784 (default 720 = 30 days)', 1, 24 * 366))
    .action((opts: CommonOpts & { account: string; ttlHours?: number }) =>
      withServices(opts, (s) => {
        const session = s.auth.createSession(opts.account, opts.ttlHours);
        print(opts, { session }, `session token (shown once): ${session.token}\nexpires at ${new Date(session.expiresAt).toISOString()}`);
      }),
    );

  common(sessions.command('list').description("list an account's sessions (no tokens)"))
    .requiredOption('--account <id>', 'account id')
    .action((opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        const rows = s.auth.listSessions(opts.account);
        print(opts, { sessions: rows }, table(rows as unknown as Array<Record<string, unknown>>, ['id', 'createdAt', 'expiresAt', 'endedAt']));
      }),
    );
  common(sessions.command('revoke').description('end a session at once; the next request with it gets 401'))
    .requiredOption('--account <id>', 'account id')
    .argument('<sessionId>', 'session id (ses_…)')
    .action((sessionId: string, opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        const session = s.auth.revokeSession(opts.account, sessionId);
        print(opts, { session }, `revoked ${sessionId}`);
      }),
    );

  const keys = program.command('keys').description('manage API keys');
  common(keys.command('create').description('create an API key; the secret is shown once'))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--name <name>', 'key name')
    .requiredOption('--permissions <list>', 'comma list, e.g. recordings:read,recordings:create')
    .addOption(intOption('--expiry <days>', 'lifetime in days, 1-365 (default 90)', 1, 365))
    .action((opts: CommonOpts & { account: string; name: string; permissions: string; expiry?: number }) =>
      withServices(opts, (s) => {
        const r = s.auth.createKey(opts.account, { name: opts.name, permissions: commaList(opts.permissions), expiry: opts.expiry });
        print(opts, r, `created key ${r.key.id} (${r.key.permissions.join(',')}), expires ${new Date(r.key.expiresAt).toISOString()}\nsecret (shown once): ${r.secret}`);
      }),
    );
  common(keys.command('list').description('list API keys (no secrets)'))
    .requiredOption('--account <id>', 'account id')
    .action((opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        const rows = s.auth.listKeys(opts.account);
        print(opts, { keys: rows }, table(rows as unknown as Array<Record<string, unknown>>, ['id', 'name', 'permissions', 'expiresAt', 'revokedAt']));
      }),
    );
  common(keys.command('revoke').description('revoke an API key; the next request with it gets 401'))
    .requiredOption('--account <id>', 'account id')
    .argument('<keyId>', 'key id (key_…)')
    .action((keyId: string, opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        const key = s.auth.revokeKey(opts.account, keyId);
        print(opts, { key }, `revoked ${keyId}`);
      }),
    );

  const devices = program.command('devices').description('manage devices');
  common(devices.command('add').description('register a device'))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--id <deviceId>', 'device id')
    .requiredOption('--name <name>', 'device name')
    .requiredOption('--model <model>', 'ring | pin | pendant')
    .action((opts: CommonOpts & { account: string; id: string; name: string; model: string }) =>
      withServices(opts, (s) => {
        s.auth.account(opts.account);
        const device = s.devices.add(opts.account, { id: opts.id, name: opts.name, model: opts.model });
        print(opts, { device }, `added ${device.model} ${device.id} (${device.name})`);
      }),
    );
  common(devices.command('list').description('list devices'))
    .requiredOption('--account <id>', 'account id')
    .action((opts: CommonOpts & { account: string }) =>
      withServices(opts, (s) => {
        s.auth.account(opts.account);
        const rows = s.devices.list(opts.account);
        print(opts, { devices: rows }, table(rows as unknown as Array<Record<string, unknown>>, ['id', 'name', 'model']));
      }),
    );
}
