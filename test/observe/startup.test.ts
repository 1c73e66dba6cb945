// docs/decisions.md §1: in a container the listen address is not the one clients reach, so the server warns
// at start when RECLIB_PUBLIC_URL is unset; with it set, no warning.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inContainer } from '../../src/server';
import { serveInProcess } from '../helpers/in-process-server';

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
