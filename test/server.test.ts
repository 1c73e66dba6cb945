// The public URL defaults to the address the server listens on (docs/decisions.md §1): the
// services get a config that carries it from the start, and the caller's config is left as given.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../src/config';
import { startServer } from '../src/server';
import { fetchUrl } from '../src/services/text-payload';

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
