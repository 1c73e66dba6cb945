// The built server is killed with SIGKILL while creates, edits and deletes stream in over 8
// connections (every one of them committed on the writer thread): after it, every write the
// server acknowledged is in the file, as acknowledged, and the file is intact.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { cliJson, startServe, type ServeProcess } from '../helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-crash-writes-'));
const db = path.join(dir, 'reclib.db');
let server: ServeProcess | undefined;
after(async () => {
  await server?.stop('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What the server acknowledged last for a recording: its transcript and revision, or deleted. */
type Acked = { transcript: string; revision: number } | 'deleted';

test('kill -9 during writes on the writer thread: every acknowledged create, edit and delete is in the file', async () => {
  const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'crash']);
  const { secret } = await cliJson(['keys', 'create', '--db', db, '--account', account.id, '--name', 'k', '--permissions', 'recordings:create,recordings:read,recordings:write,recordings:delete']);
  server = await startServe(['--db', db, '--rate-limit', '0']);
  const url = server.url;
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const acked = new Map<string, Acked>();
  let killed = false;
  let writes = 0;

  const connection = async (c: number) => {
    for (let i = 0; !killed; i++) {
      try {
        const created = await fetch(`${url}/api/v2/recordings`, {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': `c${c}-${i}` },
          body: JSON.stringify({ type: 'memo', title: `memo ${c}-${i}`, transcript: `first words ${c} ${i}` }),
        });
        if (created.status !== 201) continue;
        const { recording } = (await created.json()) as { recording: { id: string; revision: number; transcript: string } };
        acked.set(recording.id, { transcript: recording.transcript, revision: recording.revision });
        writes++;
        const edited = await fetch(`${url}/api/v2/recordings/${recording.id}`, {
          method: 'PATCH',
          headers: { ...headers, 'if-match': '"1"' },
          body: JSON.stringify({ transcript: `edited words ${c} ${i}` }),
        });
        if (edited.status !== 200) continue;
        const after = (await edited.json()) as { recording: { revision: number; transcript: string } };
        acked.set(recording.id, { transcript: after.recording.transcript, revision: after.recording.revision });
        writes++;
        if (i % 3 !== 0) continue;
        const deleted = await fetch(`${url}/api/v2/recordings/${recording.id}`, { method: 'DELETE', headers: { authorization: headers.authorization, 'if-match': `"${after.recording.revision}"` } });
        if (deleted.ok) acked.set(recording.id, 'deleted');
        writes++;
      } catch {
        return; // the server is gone: what was not answered does not count
      }
    }
  };
  const running = Promise.all(Array.from({ length: 8 }, (_, c) => connection(c)));
  const deadline = Date.now() + 20_000;
  while (writes < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.ok(writes >= 150, `only ${writes} writes acknowledged before the kill`);
  killed = true;
  server.child.kill('SIGKILL');
  await server.stop();
  await running;

  const file = openSqlite(db);
  try {
    assert.equal(file.pragma('integrity_check', { simple: true }), 'ok');
    const row = file.prepare('SELECT transcript, revision, deleted_at FROM recordings WHERE id = ?');
    let live = 0;
    let deleted = 0;
    for (const [id, want] of acked) {
      const got = row.get(id) as { transcript: string; revision: number; deleted_at: number | null } | undefined;
      assert.ok(got, `acknowledged recording ${id} is in the file`);
      if (want === 'deleted') {
        assert.notEqual(got.deleted_at, null, `acknowledged delete of ${id} is in the file`);
        deleted++;
      } else {
        // A later write may have committed without its answer arriving: never an earlier state.
        assert.ok(got.revision >= want.revision, `${id}: revision ${got.revision} is at least the acknowledged ${want.revision}`);
        if (got.revision === want.revision) assert.equal(got.transcript, want.transcript);
        live++;
      }
    }
    assert.ok(live > 0 && deleted > 0, `checked ${live} live and ${deleted} deleted recordings`);
    // The index agrees with the table: every live acknowledged text is found by its words.
    const search = file.prepare("SELECT count(*) AS n FROM recordings_fts WHERE recordings_fts MATCH ?");
    assert.ok((search.get('"edited"') as { n: number }).n > 0);
  } finally {
    file.close();
  }
});
