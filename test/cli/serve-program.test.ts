// `reclib serve` starts from a program holding the serve command alone (src/cli/serve-program.ts,
// chosen in bin/reclib.ts): it must define serve, and the top level, exactly as the whole CLI does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program';
import { buildServeProgram } from '../../src/cli/serve-program';
import { runCli } from '../helpers/bundle';

const options = (c: Command) => c.options.map((o) => ({ flags: o.flags, description: o.description, default: o.defaultValue as unknown }));
const serveOf = (p: Command) => p.commands.find((c) => c.name() === 'serve')!;

describe('the serve-only program', () => {
  it('defines the top level and the serve command (options, description, help) as the whole CLI does', () => {
    const full = buildProgram();
    const alone = buildServeProgram();
    assert.equal(alone.name(), full.name());
    assert.equal(alone.description(), full.description());
    assert.deepEqual(options(alone), options(full));
    assert.deepEqual(alone.commands.map((c) => c.name()), ['serve']);
    assert.equal(serveOf(alone).description(), serveOf(full).description());
    assert.deepEqual(options(serveOf(alone)), options(serveOf(full)));
    assert.equal(serveOf(alone).helpInformation(), serveOf(full).helpInformation());
  });

  it('the bundle: `reclib serve` with an unknown option is a usage error (exit 2), as before; --version works', async () => {
    const bad = await runCli(['serve', '--no-such-option']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown option '--no-such-option'/);
    assert.match(bad.stderr, /Usage: reclib serve \[options\]/);
    const version = await runCli(['serve', '--version']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});
