// --durability full on the built server (docs/decisions.md §11): the writer thread's connection
// runs synchronous=NORMAL and flushes the WAL itself, off the thread, before a group's members are
// answered (src/db/wal-sync.ts). Seen from outside with strace -f: every create's 201 is written
// after an fsync of the WAL that began after the create's last write to the WAL and had returned.
// With --durability normal no such flush comes between a create's commit and its answer, which is
// what shows the check can fail. (test/db/power-loss.test.ts rebuilds the files as a power cut
// would leave them; this checks that the server takes that way.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cliJson, startServe } from '../helpers/bundle';
import { straceCalls, type StraceCall } from '../helpers/strace';

const hasStrace = spawnSync('strace', ['-V']).status === 0;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-durable-acks-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** For each create's answer: whether a flush of the WAL began after the create's last WAL write and returned before the answer was written. */
function answersAfterFlush(trace: string): boolean[] {
  const all = straceCalls(trace).calls;
  const walWrite = (c: StraceCall) => /^pwrite64\(\d+<[^>]*-wal>/.test(c.text);
  const walFlush = (c: StraceCall) => /^f(?:data)?sync\(\d+<[^>]*-wal>\) += 0$/.test(c.text);
  return all
    .filter((c) => /^(?:write|writev)\(\d+<socket:/.test(c.text) && c.text.includes('HTTP/1.1 201'))
    .map((answer) => {
      const lastWrite = Math.max(...all.filter((c) => walWrite(c) && c.returned < answer.began).map((c) => c.returned));
      return all.some((c) => walFlush(c) && c.began > lastWrite && c.returned < answer.began);
    });
}

/** The processes whose parent is `pid` (from /proc: no `ps` needed). */
function childrenOf(pid: number): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command's name, in parentheses: state, then the parent's pid.
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(entry)] : [];
    } catch {
      return []; // ended meanwhile
    }
  });
}

/** Serves `db` under strace with `durability`, makes three creates one after another, stops; the trace. */
async function traced(db: string, secret: string, durability: 'full' | 'normal'): Promise<string> {
  const trace = path.join(dir, `trace-${durability}`);
  const wrapper = ['strace', '-f', '-qq', '-y', '-s', '40', '-e', 'trace=pwrite64,fsync,fdatasync,write,writev', '-o', trace];
  const server = await startServe(['--db', db, '--rate-limit', '0', '--durability', durability], { wrapper, timeoutMs: 20_000 });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${server.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `${durability}-${i}` },
        body: JSON.stringify({ type: 'clip', transcript: `durable ${durability} ${i}` }),
      });
      assert.equal(res.status, 201, await res.text());
    }
  } finally {
    // The server is strace's child: stopping strace would leave it running (detached). strace
    // ends with it.
    for (const pid of childrenOf(server.child.pid!)) process.kill(pid, 'SIGTERM');
    await server.exited;
  }
  return fs.readFileSync(trace, 'utf8');
}

describe('durable acknowledgements on the writer thread', { skip: !hasStrace && 'strace not installed' }, () => {
  it("with --durability full every create is answered only after the WAL's fsync; with normal, not", async () => {
    const db = path.join(dir, 'r.db');
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'durable']);
    const { secret } = await cliJson(['keys', 'create', '--db', db, '--account', account.id, '--name', 'k', '--permissions', 'recordings:create']);
    const full = answersAfterFlush(await traced(db, secret, 'full'));
    assert.deepEqual(full, [true, true, true]);
    const normal = answersAfterFlush(await traced(db, secret, 'normal'));
    assert.equal(normal.length, 3, 'three answers seen');
    // The checkpointer thread may flush the WAL at any time (before a checkpoint), so one answer
    // in three may happen to follow a flush; all three would not.
    assert.ok(normal.filter((flushed) => !flushed).length >= 2, `with normal, answers followed no flush: ${JSON.stringify(normal)}`);
  });
});
