// src/cli/output-errors.ts: a stdout or stderr that cannot be written (its reader has gone: EPIPE;
// a full disk: ENOSPC) never crashes `serve`, whose lines are dropped after a warning on the other
// stream; a one-shot command ends with exit 1, quietly on EPIPE, without a stack trace.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { BUNDLE, cleanEnv, ensureBundle, ROOT, runCli } from '../helpers/bundle';
import { unusedPort } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-output-errors-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDb = () => path.join(root, `${++n}.db`);
const hasDevFull = fs.existsSync('/dev/full');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawnBundle(args: string[], stdio: Array<'pipe' | 'ignore' | number>): ChildProcess {
  ensureBundle();
  return spawn(process.execPath, [BUNDLE, ...args], { cwd: ROOT, env: cleanEnv(), stdio });
}

function collect(stream: NodeJS.ReadableStream | null): () => string {
  let text = '';
  stream?.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

/** The exit code once the process has ended and its output has been read: call right after spawning. */
const closed = (child: ChildProcess) => new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (code) => resolve(code))));

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  return exited(child);
}

/** Requests enough to write log lines (a request line waits at most 20 ms for others), then /healthz once more. */
async function requestsAnswered(url: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${url}/healthz`)).status);
    await sleep(60);
  }
  statuses.push((await fetch(`${url}/api/v2/recordings`)).status);
  return statuses;
}

describe('serve goes on serving when its output cannot be written', () => {
  it('the reader of its log pipe has gone (serve | head -1): requests are answered, the log lines dropped, one warning on stderr', async () => {
    const child = spawnBundle(['serve', '--db', freshDb(), '--port', '0'], ['ignore', 'pipe', 'pipe']);
    const stderr = collect(child.stderr);
    const stdout = collect(child.stdout);
    try {
      const url = await waitFor(() => /reclib listening on (http:\/\/\S+)/.exec(stdout())?.[1], () => `the URL: ${stdout()}${stderr()}`, { timeoutMs: 8_000 });
      child.stdout!.destroy(); // the reader goes away, as head does after its line
      const statuses = await requestsAnswered(url);
      assert.deepEqual(statuses, [...Array(15).fill(200), 401]);
      assert.equal(child.exitCode, null, `still running: ${stderr()}`);
      assert.equal(stderr(), 'reclib: cannot write to stdout: its reader has gone (EPIPE); its lines are dropped from now on, the server goes on serving\n');
      assert.equal(await stop(child), 0, 'SIGTERM still ends it cleanly');
    } finally {
      await stop(child);
    }
  });

  it('its stdout is a full disk (/dev/full): it starts, answers, and says so once on stderr', { skip: !hasDevFull && 'no /dev/full' }, async () => {
    const port = await unusedPort();
    const full = fs.openSync('/dev/full', 'w');
    const child = spawnBundle(['serve', '--db', freshDb(), '--port', String(port)], ['ignore', full, 'pipe']);
    fs.closeSync(full);
    const stderr = collect(child.stderr);
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor(
        () => (child.exitCode !== null ? Promise.reject(new Error(`serve exited ${child.exitCode}: ${stderr()}`)) : fetch(`${url}/healthz`).then((r) => r.status, () => undefined)),
        () => `an answer on ${url}: ${stderr()}`,
        { timeoutMs: 8_000 },
      );
      assert.deepEqual(await requestsAnswered(url), [...Array(15).fill(200), 401]);
      assert.equal(child.exitCode, null);
      assert.equal(stderr(), 'reclib: cannot write to stdout: no space left on device; its lines are dropped from now on, the server goes on serving\n');
    } finally {
      await stop(child);
    }
  });

  it('serve --json with its log (stderr) on a full disk: answers, and stdout keeps its one JSON object', { skip: !hasDevFull && 'no /dev/full' }, async () => {
    const full = fs.openSync('/dev/full', 'w');
    const child = spawnBundle(['serve', '--db', freshDb(), '--port', '0', '--json'], ['ignore', 'pipe', full]);
    fs.closeSync(full);
    const stdout = collect(child.stdout);
    try {
      const line = await waitFor(() => (stdout().includes('\n') ? stdout() : undefined), () => `the JSON line: ${stdout()}`, { timeoutMs: 8_000 });
      const { url } = (JSON.parse(line) as { serve: { url: string } }).serve;
      assert.deepEqual(await requestsAnswered(url), [...Array(15).fill(200), 401]);
      assert.equal(child.exitCode, null);
      assert.equal(stdout(), line, 'nothing after the JSON object');
    } finally {
      await stop(child);
    }
  });
});

describe('a one-shot command whose stdout cannot be written', () => {
  const withAccount = async () => {
    const db = freshDb();
    const r = await runCli(['accounts', 'create', '--db', db, '--name', 'owner']);
    assert.equal(r.code, 0, r.stderr);
    return db;
  };

  it('ends quietly with exit 1 when its reader has gone (reclib accounts list | head -0)', async () => {
    const db = await withAccount();
    const child = spawnBundle(['accounts', 'list', '--db', db], ['ignore', 'pipe', 'pipe']);
    const done = closed(child);
    child.stdout!.destroy(); // closed before the command writes: its write fails with EPIPE
    const stderr = collect(child.stderr);
    assert.equal(await done, 1);
    assert.equal(stderr(), '', 'no stack trace, no message');
  });

  it('exits 1 saying why when stdout is a full disk (/dev/full), as JSON with --json', { skip: !hasDevFull && 'no /dev/full' }, async () => {
    const db = await withAccount();
    for (const json of [false, true]) {
      const full = fs.openSync('/dev/full', 'w');
      const child = spawnBundle(['accounts', 'list', '--db', db, ...(json ? ['--json'] : [])], ['ignore', full, 'pipe']);
      const done = closed(child);
      fs.closeSync(full);
      const stderr = collect(child.stderr);
      assert.equal(await done, 1);
      const message = 'cannot write to stdout: no space left on device';
      assert.equal(stderr(), json ? `${JSON.stringify({ error: { code: 'output_failed', message } })}\n` : `reclib: ${message}\n`);
    }
  });
});
