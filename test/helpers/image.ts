// The Docker image as its Dockerfile defines it, for tests on a machine without Docker: its
// instructions, and its runtime folder assembled by the Dockerfile's own copy command (the build
// stage's last RUN, after `npm run build`), so the tests follow the Dockerfile rather than a list of
// its files kept by hand.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBundle, ROOT } from './bundle';

export interface Instruction {
  /** 0 for the first FROM's stage, 1 for the second. */
  stage: number;
  op: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined and comments left out. */
export function dockerfile(text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+$/, ''); // CRLF, trailing blanks
    if (/^\s*#/.test(line)) continue;
    current += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (line.endsWith('\\')) continue;
    const m = /^\s*(\w+)\s+(.*)$/s.exec(current);
    current = '';
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    if (op === 'FROM') stage++;
    out.push({ stage, op, args: m[2]!.trim() });
  }
  return out;
}

/** The one instruction `op` of `stage` whose arguments pass `test`. */
export function instruction(steps: Instruction[], stage: number, op: string, test: (args: string) => boolean = () => true): string {
  const found = steps.filter((s) => s.stage === stage && s.op === op && test(s.args));
  assert.equal(found.length, 1, `one ${op} in stage ${stage} of the Dockerfile`);
  return found[0]!.args;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Runs the build stage's copy into its runtime folder with `to` in that folder's place (from the
 * checkout, whose bundle is built and whose node_modules are installed); returns the bundle's path
 * there (the runtime stage's CMD's script).
 */
export function imageRuntimeCopy(to: string, steps = dockerfile()): string {
  ensureBundle();
  const runtimeStage = Math.max(...steps.map((s) => s.stage));
  const from = /^--from=build (\S+) \.\/$/.exec(instruction(steps, runtimeStage, 'COPY', (a) => a.startsWith('--from=build')))?.[1];
  assert.ok(from, 'the runtime stage copies one folder of the build stage into its WORKDIR');
  const copy = instruction(steps, 0, 'RUN', (a) => a.startsWith('npm run build'));
  fs.mkdirSync(to, { recursive: true });
  // Node first on the PATH (the copy asks it for the platform's name): the one running the tests.
  // `from` as a whole path (after a space, before a slash, a space or the end), `to` quoted for sh.
  const quoted = `'${to.replaceAll("'", `'\\''`)}'`;
  execFileSync('sh', ['-c', copy.replace(/^npm run build/, 'true').replace(new RegExp(`(?<= )${escapeRe(from)}(?=[/ ]|$)`, 'g'), quoted)], {
    cwd: ROOT,
    env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
  });
  const cmd = JSON.parse(instruction(steps, runtimeStage, 'CMD')) as string[];
  const script = cmd.find((a) => a.endsWith('.cjs'));
  assert.ok(script, 'the CMD runs the bundle');
  return path.join(to, script);
}
