// `reclib serve`: the HTTP API and the background workers in one process, with a graceful stop.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Config } from './config';
import { createApp } from './http/app';
import { createNodeServer } from './http/node-server';
import { openRuntime } from './runtime';
import type { Services } from './services';
import type { Worker } from './worker';

export interface RunningServer {
  url: string;
  services: Services;
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;

export function firstRunHint(services: Services, config: Config): string | undefined {
  if (services.auth.store.hasAccounts()) return undefined;
  const db = config.db === './data/reclib.db' ? '' : ` --db ${config.db}`;
  return [
    'No account yet. Create the first account, an API key and a session:',
    `  reclib accounts create --name me${db}`,
    `  reclib keys create${db} --account <account id> --name first-key --permissions recordings:create,recordings:read,recordings:write,recordings:delete,settings:read,settings:write,events:read`,
    `  reclib sessions create${db} --account <account id>`,
    '(from a checkout: npx tsx bin/reclib.ts … instead of reclib …)',
  ].join('\n');
}

export async function startServer(config: Config, log: (line: string) => void = console.log): Promise<RunningServer> {
  const services = openRuntime(config);
  const { app } = createApp(services);
  const workers: Worker[] = services.workers;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createNodeServer(app.fetch, config.host, config);
    s.once('error', reject);
    s.listen(config.port, config.host, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${hostForUrl}:${port}`;
  if (!config.publicUrl) config.publicUrl = url;
  for (const w of workers) w.start();
  const hint = firstRunHint(services, config);
  log(hint ? `reclib listening on ${url}\n${hint}` : `reclib listening on ${url}`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, let in-flight requests finish (bounded), drain workers, close the db.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if ('closeIdleConnections' in server) (server as { closeIdleConnections(): void }).closeIdleConnections();
      const timer = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
      await Promise.race([Promise.all([closed, ...workers.map((w) => w.stop())]), timer]);
      services.core.db.close();
    })());
  return { url, services, close };
}
