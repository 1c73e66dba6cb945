// Starting the server (docs/decisions.md §1): the public URL defaults to the address the server
// listens on (the services get a config that carries it from the start, and the caller's config is
// left as given), and in a container without a public URL the server warns.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../src/config';
import { serveLockFile } from '../src/db/serve-lock';
import { cliCommand, inContainer, shellWord, startServer } from '../src/server';
import { fetchUrl } from '../src/services/text-payload';
import { serveInProcess } from './helpers/in-process-server';
import { startReceiver } from './helpers/receiver';

describe('the default public URL', () => {
  it('is the bound address (the port the system picked for --port 0), without changing the config passed in', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-public-url-'));
    const config = testConfig({ db: path.join(dir, 'reclib.db'), port: 0, publicUrl: undefined });
    const server = await startServer(config, () => {});
    t.after(async () => {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    assert.equal(server.services.core.config.publicUrl, server.url);
    assert.equal(fetchUrl(server.services.core.config, 'rec_1'), `${server.url}/api/v1/recordings/rec_1`);
    assert.equal(config.publicUrl, undefined);
  });
});

// docs/decisions.md §1: in a container the listen address is not the one clients reach, so the server warns
// at start when RECLIB_PUBLIC_URL is unset; with it set, no warning.
describe('the start-up warning about RECLIB_PUBLIC_URL', () => {
  it('RECLIB_CONTAINER=1 (set by the Dockerfile) counts as a container', () => {
    assert.equal(inContainer({ RECLIB_CONTAINER: '1' }), true);
  });

  it('in a container without a public URL the server warns and names RECLIB_PUBLIC_URL; with one it does not', async (t) => {
    const before = process.env.RECLIB_CONTAINER;
    process.env.RECLIB_CONTAINER = '1';
    t.after(() => {
      if (before === undefined) delete process.env.RECLIB_CONTAINER;
      else process.env.RECLIB_CONTAINER = before;
    });
    const without = await serveInProcess(t);
    assert.ok(without.lines().some((l) => /^warn: RECLIB_PUBLIC_URL is not set, and this looks like a container/.test(l)), without.lines().join('\n'));
    const withUrl = await serveInProcess(t, { publicUrl: 'https://rec.example.org' });
    assert.ok(!withUrl.lines().some((l) => l.includes('RECLIB_PUBLIC_URL')), withUrl.lines().join('\n'));
  });
});

// docs/decisions.md §1: the first-run hint's commands are the ones this person can paste, written
// the way they started the server.
describe('the CLI command in the first-run hint', () => {
  const cwd = '/home/me/reclib';
  it('in the Docker image: docker exec -i (a command reads its standard input), with the image\'s reclib', () => {
    assert.equal(cliCommand('/app/dist/reclib.cjs', { RECLIB_CONTAINER: '1' }, '/app'), 'docker exec -i <container> reclib');
  });
  it('started with node: node and the same file, relative to the working folder when inside it', () => {
    assert.equal(cliCommand('/home/me/reclib/dist/reclib.cjs', {}, cwd), 'node dist/reclib.cjs');
    assert.equal(cliCommand('/opt/reclib/dist/reclib.cjs', { npm_command: 'start' }, cwd), 'node /opt/reclib/dist/reclib.cjs');
    assert.equal(cliCommand('/home/me/reclib/../other/dist/reclib.cjs', {}, cwd), 'node /home/me/reclib/../other/dist/reclib.cjs');
    assert.equal(cliCommand('/srv/my apps/dist/reclib.cjs', {}, cwd), "node '/srv/my apps/dist/reclib.cjs'");
  });
  it('from a checkout through tsx (npx sets npm_command there too): tsx and the entry', () => {
    assert.equal(cliCommand('/home/me/reclib/bin/reclib.ts', { npm_command: 'exec' }, cwd), 'npx tsx bin/reclib.ts');
  });
  it('through npx: npx reclib; a global install: reclib', () => {
    assert.equal(cliCommand('/root/.npm/_npx/0a1b/node_modules/.bin/reclib', { npm_command: 'exec' }, cwd), 'npx reclib');
    assert.equal(cliCommand('/usr/local/bin/reclib', {}, cwd), 'reclib');
  });
  it('shellWord quotes only what a shell would split or expand', () => {
    assert.equal(shellWord('/data/reclib.db'), '/data/reclib.db');
    assert.equal(shellWord('my notes.db'), "'my notes.db'");
    assert.equal(shellWord("it's.db"), `'it'\\''s.db'`);
    assert.equal(shellWord('$HOME.db'), "'$HOME.db'");
  });
});

// docs/decisions.md §1: --deliveries off, for a restored copy looked at beside production.
describe('serve --deliveries off', () => {
  it('sends no delivery and leaves it queued, and says so at start', async (t) => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const served = await serveInProcess(t, { deliveries: 'off', webhookAllow: '127.0.0.1' });
    assert.ok(served.lines().some((l) => /^warn: deliveries are off \(--deliveries off\): no webhook is sent/.test(l)), served.lines().join('\n'));
    const { id, key } = served.account();
    const { services } = served.server;
    await services.webhooks.create(id, { url: receiver.url, events: ['recording.created'] });
    const res = await fetch(`${served.url}/api/v2/recordings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'off-1' },
      body: JSON.stringify({ type: 'clip', transcript: 'todo buy milk' }),
    });
    assert.equal(res.status, 201);
    const { recording } = (await res.json()) as { recording: { id: string } };
    // With deliveries on, this one is on the wire within ~100 ms (every delivery test).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(receiver.requests.length, 0);
    assert.deepEqual(
      services.webhooks.deliveries.forRecording(id, recording.id).map((d) => d.status),
      ['queued'],
    );
  });
});

describe('the first-run hint names where to open the web app', () => {
  it('the public URL without its credentials or query; no address when the server listens on every one and none was set', async (t) => {
    const withCredentials = await serveInProcess(t, { publicUrl: 'https://admin:hunter2@notes.example.org/?k=1' });
    const lines = withCredentials.lines().join('\n');
    assert.match(lines, /To sign in to the web app at https:\/\/notes\.example\.org\/ too/);
    assert.doesNotMatch(lines, /hunter2|k=1/);
    const everywhere = await serveInProcess(t, { host: '0.0.0.0' });
    assert.match(everywhere.lines().join('\n'), /^To sign in to the web app too, give the account a password:$/m);
  });
});

describe('one server per database file', () => {
  it('a second startServer on the same file is refused before it listens, naming the file; once the first has closed, a new one starts', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-serve-lock-'));
    const db = path.join(dir, 'reclib.db');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const first = await startServer(testConfig({ db, port: 0 }), () => {});
    t.after(() => first.close()); // close() is idempotent: also when an assertion fails midway
    const lines: string[] = [];
    await assert.rejects(startServer(testConfig({ db, port: 0 }), (l) => lines.push(l)), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'RECLIB_SERVE_LOCKED');
      assert.match(e.message, new RegExp(`another reclib serve is serving ${db.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      return true;
    });
    assert.deepEqual(lines, [], 'no start-up line: it never listened');
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200, 'the first goes on serving');
    // Another database in the same folder is another lock.
    const other = await startServer(testConfig({ db: path.join(dir, 'other.db'), port: 0 }), () => {});
    await other.close();
    await first.close();
    const next = await startServer(testConfig({ db, port: 0 }), () => {});
    t.after(() => next.close());
    assert.equal((await fetch(`${next.url}/healthz`)).status, 200);
    await next.close();
    assert.equal(fs.statSync(`${db}.serve-lock`).mode & 0o777, 0o600, 'the lock file is private like the database');
  });
});

describe('the serve lock of a database reached through a symlink', () => {
  it('is the lock of the file the symlink names: a server on the link is refused while one serves the file, and the other way round', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-serve-lock-link-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'data'));
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    const db = path.join(dir, 'data', 'reclib.db');
    const link = path.join(dir, 'elsewhere', 'library.db');
    // SQLite follows the link: both names open one database, with one -wal beside the file.
    const first = await startServer(testConfig({ db, port: 0 }), () => {});
    t.after(() => first.close());
    fs.symlinkSync(path.relative(path.dirname(link), db), link);
    const refused = (e: Error & { code?: string }) => e.code === 'RECLIB_SERVE_LOCKED';
    await assert.rejects(startServer(testConfig({ db: link, port: 0 }), () => {}), refused);
    await first.close();
    const viaLink = await startServer(testConfig({ db: link, port: 0 }), () => {});
    t.after(() => viaLink.close());
    await assert.rejects(startServer(testConfig({ db, port: 0 }), () => {}), refused);
    await viaLink.close();
    assert.ok(!fs.existsSync(`${link}.serve-lock`), 'the lock file is beside the database file, not beside the link');
    // A link to a database not created yet names the file SQLite will create (relative to the link's real folder).
    const later = path.join(dir, 'data', 'later.db');
    fs.symlinkSync('../data/later.db', path.join(dir, 'elsewhere', 'later.db'));
    fs.mkdirSync(path.join(dir, 'deep'));
    fs.symlinkSync('../elsewhere', path.join(dir, 'deep', 'via'));
    assert.equal(serveLockFile(path.join(dir, 'deep', 'via', 'later.db')), `${fs.realpathSync(path.dirname(later))}/later.db.serve-lock`);
  });
});

describe('the serve lock on a folder that refuses new files', () => {
  it('the server runs without the lock and says so in a warning (a database on a read-only folder is served, its writes refused)', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-serve-lock-ro-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const openSync = fs.openSync;
    t.mock.method(fs, 'openSync', (file: fs.PathLike, ...rest: unknown[]) => {
      if (String(file).endsWith('.serve-lock')) throw Object.assign(new Error(`EROFS: read-only file system, open '${String(file)}'`), { code: 'EROFS' });
      return (openSync as (...a: unknown[]) => number)(file, ...rest);
    });
    const lines: string[] = [];
    const server = await startServer(testConfig({ db: path.join(dir, 'reclib.db'), port: 0 }), (l) => lines.push(...l.split('\n')));
    t.after(() => server.close());
    server.logger.flush();
    assert.ok(
      lines.some((l) => /^warn: serving without the lock that refuses a second reclib serve on this database \(.*reclib\.db\.serve-lock: EROFS/.test(l)),
      lines.join('\n'),
    );
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });
});
