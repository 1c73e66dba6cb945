// Starting the server (docs/decisions.md §1): the public URL defaults to the address the server
// listens on (the services get a config that carries it from the start, and the caller's config is
// left as given), and in a container without a public URL the server warns.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../src/config';
import { inContainer, startServer } from '../src/server';
import { fetchUrl } from '../src/services/text-payload';
import { serveInProcess } from './helpers/in-process-server';

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
