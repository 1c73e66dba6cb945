// The Docker image's runtime stage holds only what the Dockerfile copies out of the build stage
// (the bundle, schema.sql and a few files of node_modules), and CI has no Docker daemon to build it.
// This test runs the Dockerfile's own commands instead: the build stage's copy into /runtime and the
// runtime stage's link of `reclib` onto the PATH, into a temporary folder standing in for the
// image's root, then starts the server there as the image's CMD does, with the image's ENV, and
// uses it as a self-hoster would: the first-run hint's commands through `docker exec`'s `reclib`,
// a create and a search, the web app, the HEALTHCHECK command, `docker stop`'s SIGTERM. A file the
// bundle needs that the Dockerfile does not copy fails it. On CI's Node 20 the server uses
// better-sqlite3 12, whose addon the image carries as its fallback; run on Node 22 or later (the
// image's is 24), it uses 13, and the test fails if 13 falls back.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cleanEnv, hintCommands, startServe, testCodeCache } from '../helpers/bundle';
import { dockerfile, imageRuntimeCopy, instruction } from '../helpers/image';

describe('the Docker image, assembled by its Dockerfile without Docker', () => {
  const steps = dockerfile();
  const runtimeStage = Math.max(...steps.map((s) => s.stage));
  const one = (stage: number, op: string, test?: (args: string) => boolean) => instruction(steps, stage, op, test);

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-image-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  const workdir = one(runtimeStage, 'WORKDIR');
  const inImage = (p: string) => path.join(root, p);
  const app = inImage(workdir);
  const bin = inImage('/usr/local/bin');
  const data = inImage('/data');
  // The image's PATH: its own bin folder (where `reclib` is linked), and Node.
  const PATH = `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`;
  const env: Record<string, string> = Object.fromEntries(
    one(runtimeStage, 'ENV')
      .split(/\s+/)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]),
  );

  it("the build stage's copy and the runtime stage's link give a folder the server starts from, which the hint's CLI commands and the API work on", async () => {
    const bundle = imageRuntimeCopy(app, steps);
    // The link of `reclib` onto the PATH, made as the runtime stage makes it.
    const link = /ln -s (\S+) (\S+)/.exec(one(runtimeStage, 'RUN', (a) => a.includes('ln -s')));
    assert.ok(link, 'the runtime stage links reclib onto the PATH');
    fs.mkdirSync(path.dirname(inImage(link[2]!)), { recursive: true });
    fs.symlinkSync(inImage(link[1]!), inImage(link[2]!));
    assert.equal(path.basename(link[2]!), 'reclib');
    fs.mkdirSync(data);

    // Only what the Dockerfile copies is there (no sources, no node_modules but the driver's).
    assert.deepEqual(fs.readdirSync(app).sort(), ['dist', 'node_modules', 'schema.sql']);
    const cmd = JSON.parse(one(runtimeStage, 'CMD')) as string[];
    const script = cmd.findIndex((a) => path.join(app, a) === bundle);
    assert.deepEqual([cmd[0], ...cmd.slice(script + 1)], ['node', 'serve']);
    const imageEnv = { ...env, PATH, RECLIB_DB: path.join(data, path.basename(env.RECLIB_DB!)), RECLIB_HOST: '127.0.0.1', npm_command: '', NODE_COMPILE_CACHE: testCodeCache() };
    const server = await startServe([], { bundle, cwd: app, nodeArgs: cmd.slice(1, script), env: imageEnv });
    try {
      // The first-run hint, as `docker exec` would run it (with the image's ENV, from anywhere).
      const hint = await hintCommands(server);
      assert.equal(hint.length, 4, server.stdout());
      const sh = (line: string) => {
        assert.match(line, /docker exec -i <container> reclib /);
        return execFileSync('sh', ['-c', line.replace('docker exec -i <container> ', '')], { cwd: '/', env: imageEnv, encoding: 'utf8' });
      };
      const account = /acc_\w+/.exec(sh(hint[0]!))?.[0];
      assert.ok(account, 'an account was created');
      const key = /rlk_\w+/.exec(sh(hint[1]!.replace('<account id>', account)))?.[0];
      assert.ok(key, 'a key was created');
      sh(hint[3]!.replace('<account id>', account).replace('<a long passphrase>', 'a long enough passphrase'));
      const signIn = await fetch(`${server.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account, password: 'a long enough passphrase' }) });
      assert.equal(signIn.status, 200, 'the password the hint sets signs in');

      const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': 'image-1' },
        body: JSON.stringify({ type: 'clip', transcript: 'todo buy oat milk', recordedAt: Date.now() }),
      });
      assert.equal(created.status, 201, await created.clone().text());
      const found = (await (await fetch(`${server.url}/api/v2/recordings?q=oat`, { headers: auth })).json()) as { recordings: Array<{ transcript: string }> };
      assert.deepEqual(
        found.recordings.map((r) => r.transcript),
        ['todo buy oat milk'],
      );

      // The web app and its assets.
      const page = await fetch(`${server.url}/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      const asset = /src="(\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(asset, 'the page loads a script');
      assert.equal((await fetch(server.url + asset)).status, 200);

      // The HEALTHCHECK's command, on the port the server took.
      const health = /CMD (\[.*\])$/.exec(one(runtimeStage, 'HEALTHCHECK'))?.[1];
      assert.ok(health);
      const [node, ...healthArgs] = JSON.parse(health) as string[];
      assert.equal(node, 'node');
      execFileSync(process.execPath, healthArgs, { env: cleanEnv({ RECLIB_PORT: new URL(server.url).port }) });
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0, server.stderr());
    }
    assert.match(server.stdout(), /reclib stopped/);
    // No warning but the container's about RECLIB_PUBLIC_URL (not a fallback of the driver).
    assert.deepEqual(server.stderr().split('\n').filter((l) => l && !l.includes('RECLIB_PUBLIC_URL')), []);
  });
});
