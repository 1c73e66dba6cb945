// The entry refuses a Node older than package.json's `engines` with a sentence saying so.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { MIN_NODE, nodeVersionProblem } from '../src/node-version';
import { ROOT, runCli } from './helpers/bundle';

it('MIN_NODE is what package.json asks for', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, `>=${MIN_NODE.join('.')}`);
});

it('Node older than that is refused by name, the same minor or newer is not', () => {
  assert.equal(nodeVersionProblem('20.17.0'), 'reclib needs Node.js 20.18 or newer; this is Node.js 20.17.0');
  assert.match(nodeVersionProblem('18.20.4') ?? '', /needs Node\.js 20\.18 or newer; this is Node\.js 18\.20\.4/);
  for (const ok of ['20.18.0', '20.20.2', '21.0.0', '22.23.3', '24.21.0']) assert.equal(nodeVersionProblem(ok), null, ok);
  assert.equal(nodeVersionProblem(process.versions.node), null);
});

it('the bundle says so and exits 1 before it does anything', async () => {
  const r = await runCli(['serve', '--port', '0', '--db', ':memory:'], { nodeArgs: ['--require', path.join(ROOT, 'test/fixtures/node-20-17.cjs')] });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, 'reclib needs Node.js 20.18 or newer; this is Node.js 20.17.0\n');
  assert.equal(r.stdout, '');
});
