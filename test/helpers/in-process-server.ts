// `reclib serve` in this process (startServer) on a fresh database file and a free port, with its
// log lines captured: for tests of what the server itself adds around the app (the request log,
// /metrics, the start-up line).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { testConfig, type Config } from '../../src/config';
import { PERMISSIONS } from '../../src/permissions';
import { startServer, type RunningServer } from '../../src/server';

export interface InProcessServer {
  url: string;
  server: RunningServer;
  /** Every log line so far (flushed first). */
  lines(): string[];
  /** An account with a session token and a key with every permission. */
  account(password?: string): { id: string; session: string; key: string };
}

export async function serveInProcess(t: TestContext, over: Partial<Config> = {}): Promise<InProcessServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-served-'));
  const captured: string[] = [];
  const server = await startServer(testConfig({ db: path.join(dir, 'reclib.db'), port: 0, publicUrl: undefined, ...over }), (chunk) => captured.push(...chunk.split('\n')));
  t.after(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: server.url,
    server,
    lines() {
      server.logger.flush();
      return [...captured];
    },
    account(password) {
      const { auth } = server.services;
      const account = auth.createAccount('observer', password);
      const session = auth.createSession(account.id).token;
      const key = auth.createKey(account.id, { name: 'all', permissions: [...PERMISSIONS] }).secret;
      return { id: account.id, session, key };
    },
  };
}
