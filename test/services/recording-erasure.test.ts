// docs/decisions.md §13 and §5: deletion erases the text from the database and the search index —
// not only from the row: the search vocabulary and the database file itself keep none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig, testConfig } from '../../src/config';
import { Checkpointer, type CheckpointReport } from '../../src/db/checkpointer';
import { fileStamp } from '../../src/db/page-scrub';
import { markScrubbed, takeScrubMark, WHOLE_PASS_EVERY_MS } from '../../src/db/scrub-mark';
import { openSqlite } from '../../src/db/sqlite';
import type { Principal } from '../../src/permissions';
import { openRuntime } from '../../src/runtime';
import { startServer } from '../../src/server';
import type { Services } from '../../src/services';
import { harness } from '../helpers/harness';
import { prng } from '../helpers/prng';
import { created, patch, remove } from '../helpers/recording-client';

describe('deleted text is erased everywhere', () => {
  it('the search vocabulary drops words no live recording has any more, and keeps the others', async () => {
    const h = harness();
    const token = h.key();
    const a = await created(h, token, { type: 'clip', title: 'Crème plans', transcript: 'zebrafinch shared' });
    await created(h, token, { type: 'clip', transcript: 'shared words' });
    const { terms } = h.services.recordings;
    assert.deepEqual(terms.expansions('zebra', 5), ['zebrafinch']);
    assert.deepEqual(terms.expansions('crem', 5), ['creme']);
    await remove(h, token, a.id, '1');
    assert.deepEqual(terms.expansions('zebra', 5), []);
    assert.deepEqual(terms.expansions('crem', 5), []);
    assert.deepEqual(terms.expansions('plan', 5), []);
    assert.deepEqual(terms.expansions('shar', 5), ['shared'], 'still in another recording');
  });

  it('an edit that takes a word out drops it from the vocabulary too', async () => {
    const h = harness();
    const token = h.key();
    const a = await created(h, token, { type: 'clip', transcript: 'call the veterinarian' });
    await patch(h, token, a.id, { transcript: 'call the dentist' }, '1');
    assert.deepEqual(h.services.recordings.terms.expansions('veter', 5), []);
    assert.deepEqual(h.services.recordings.terms.expansions('dent', 5), ['dentist']);
  });

  it("a word's witness answers for it: the index is asked again only when the witness no longer has the word", async () => {
    const h = harness();
    const token = h.key();
    const { terms } = h.services.recordings;
    const asked: string[] = [];
    const store = (terms as unknown as { store: { indexedIn(w: string): number | undefined } }).store;
    const indexedIn = store.indexedIn.bind(store);
    store.indexedIn = (w) => {
      asked.push(w);
      return indexedIn(w);
    };
    const a = await created(h, token, { type: 'clip', transcript: 'heron alpha' });
    const b = await created(h, token, { type: 'clip', transcript: 'heron beta' });
    const c = await created(h, token, { type: 'clip', transcript: 'heron gamma' });
    const d = await created(h, token, { type: 'clip', transcript: 'heron delta' });
    await remove(h, token, b.id, '1');
    assert.deepEqual(asked.sort(), ['beta', 'heron'], 'the first removal asks the index');
    asked.length = 0;
    await remove(h, token, a.id, '1');
    assert.deepEqual(asked, ['alpha'], 'heron: its witness (the newest, d) still has it');
    asked.length = 0;
    // The witness loses the word in an edit: the index is asked, and names another recording.
    await patch(h, token, d.id, { transcript: 'egret delta' }, '1');
    assert.deepEqual(asked, ['heron']);
    assert.deepEqual(terms.expansions('hero', 5), ['heron'], 'c still has it');
    asked.length = 0;
    // The last recording with the word goes: its witness is not live, the index has none left.
    await remove(h, token, c.id, '1');
    assert.deepEqual(asked.sort(), ['gamma', 'heron']);
    assert.deepEqual(terms.expansions('hero', 5), []);
  });

  it('a witness changed by another process is read as it is now, not as it was remembered', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-witness-'));
    try {
      const h = harness({ db: path.join(dir, 'r.db') });
      const token = h.key();
      const a = await created(h, token, { type: 'clip', transcript: 'plover one' });
      const b = await created(h, token, { type: 'clip', transcript: 'plover two' });
      const c = await created(h, token, { type: 'clip', transcript: 'plover three' });
      await remove(h, token, a.id, '1'); // the index names c, the newest, as plover's witness
      // Another process (the CLI, say) deletes c: this process's services never see it happen.
      const other = openRuntime(h.config, h.clock);
      const principal = other.auth.authenticate(token);
      other.recordings.remove(principal, c.id, 1);
      other.core.db.close();
      assert.deepEqual(h.services.recordings.terms.expansions('plov', 5), ['plover'], 'b still has it');
      await remove(h, token, b.id, '1');
      assert.deepEqual(h.services.recordings.terms.expansions('plov', 5), [], 'kept on the word of a deleted witness');
      h.services.core.db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the database file keeps no copy of a deleted title, transcript or summary', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-erase-'));
    try {
      const h = harness({ db: path.join(dir, 'r.db') });
      const token = h.key();
      const marker = 'Xylophonequartz';
      const long = `${marker} `.repeat(800); // overflows its page
      const recs = [
        await created(h, token, { type: 'memo', title: `${marker} title`, transcript: `short ${marker}`, summary: `${marker} summary` }),
        await created(h, token, { type: 'memo', transcript: long }),
      ];
      const { db } = h.services.core;
      db.pragma('wal_checkpoint(TRUNCATE)');
      const file = path.join(dir, 'r.db');
      assert.ok(fs.readFileSync(file).includes(marker), 'sanity: the text is in the file before the delete');
      for (const r of recs) await remove(h, token, r.id, '1');
      db.pragma('wal_checkpoint(TRUNCATE)');
      for (const f of [file, `${file}-wal`]) {
        if (fs.existsSync(f)) assert.ok(!fs.readFileSync(f).includes(marker), `${path.basename(f)} still holds deleted text`);
      }
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the WAL file keeps no copy either (serve truncates it)', () => {
    const marker = 'Quetzalmarmalade';
    /** A file-backed runtime as serve builds it, with a key that may create and delete. */
    /** `file`: where the database is opened (a symlink, say); `wal` is beside the real file, as SQLite puts it. */
    function runtime(dir: string, file = path.join(dir, 'r.db')) {
      // durability normal: the moving-rows tests write thousands of times, and no test here cuts the power.
      const services = openRuntime(loadConfig({ db: file, durability: 'normal' }, {}));
      const principal = writerOf(services);
      const checkpointer = services.workers.find((w): w is Checkpointer => w instanceof Checkpointer);
      assert.ok(checkpointer, 'serve runs a Checkpointer on a file database');
      const truncated = () =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no WAL truncation within 15 s')), 15_000);
          checkpointer.onCheckpoint((r: CheckpointReport) => {
            if (r.truncated) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
      /** Resolves at the first report `when` accepts. */
      const reported = (when: (r: CheckpointReport) => boolean, ms = 20_000) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no such checkpoint report within ${ms} ms`)), ms);
          checkpointer.onCheckpoint((r: CheckpointReport) => {
            if (when(r)) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
      const create = (text: string, key: string) => services.recordings.create(principal, { type: 'memo', title: 'call', transcript: text }, key).row;
      const remove = (id: string, revision = 1) => services.recordings.remove(principal, id, revision);
      const moveAndDelete = () => moveAndDeleteWith(services, principal);
      return { file, wal: `${fs.realpathSync(file)}-wal`, services, checkpointer, truncated, reported, create, remove, moveAndDelete };
    }

    /** A key of a new account of `services` that may create, edit and delete. */
    const writerOf = (services: Services) => {
      const account = services.auth.createAccount('me');
      return services.auth.authenticate(services.auth.createKey(account.id, { name: 'k', permissions: ['recordings:create', 'recordings:write', 'recordings:delete'] }).secret);
    };

    /**
     * Recordings whose rows grow and move between pages (the index's too), then every third
     * deleted: SQLite leaves copies of moved rows in pages' unallocated space, and secure_delete
     * zeroes only the live copy. The words of the deleted recordings.
     */
    function moveAndDeleteWith(services: Services, principal: Principal): string[] {
      const rnd = prng(11);
      const word = () => `v${Array.from({ length: 11 }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('')}`;
      const made = Array.from({ length: 1200 }, (_, i) => {
        const words = [word(), word(), word(), word()];
        return { row: services.recordings.create(principal, { type: 'memo', title: 'call', transcript: `the usual ${words.join(' ')} words` }, `m${i}`).row, words };
      });
      for (let i = 0; i < made.length; i += 2) {
        services.recordings.update(principal, made[i]!.row.id, { summary: 'padding '.repeat(40 + Math.floor(rnd() * 80)) }, 1);
      }
      const deleted: string[] = [];
      for (let i = 0; i < made.length; i += 3) {
        services.recordings.remove(principal, made[i]!.row.id, i % 2 === 0 ? 2 : 1);
        deleted.push(...made[i]!.words);
      }
      return deleted;
    }

    /** Which of `words` the file `f` holds. */
    const stillIn = (f: string, words: string[]) => {
      const bytes = fs.readFileSync(f);
      return words.filter((w) => bytes.includes(w));
    };

    type Runtime = ReturnType<typeof runtime>;
    /** `test` on a runtime in a fresh folder; its workers stopped, its connection closed and the folder removed afterwards. `at`: makes, in the folder, where the database is opened. */
    async function inRuntime(prefix: string, test: (rt: Runtime) => Promise<void>, at?: (dir: string) => string): Promise<void> {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      const rt = runtime(dir, at?.(dir));
      try {
        await test(rt);
      } finally {
        for (const w of rt.services.workers) await w.stop();
        rt.services.core.db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    it('shortly after a delete commits, while serve runs', async () => {
      await inRuntime('reclib-erase-wal-', async (rt) => {
        const firstPass = rt.truncated(); // the start-up truncation (see the next test)
        for (const w of rt.services.workers) w.start();
        await firstPass;
        const r = rt.create(`remember ${marker}`, 'k1');
        rt.create('a later write', 'k2');
        assert.ok(fs.readFileSync(rt.wal).includes(marker), 'sanity: the WAL holds the text');
        const erased = rt.truncated();
        rt.remove(r.id);
        await erased;
        assert.ok(!fs.readFileSync(rt.wal).includes(marker), 'the WAL holds no deleted text');
        assert.ok(!fs.readFileSync(rt.file).includes(marker), 'the database file holds no deleted text');
        assert.equal(rt.create('writes go on afterwards', 'k3').revision, 1);
      });
    });

    it('a delete whose process died before the truncation is erased when serve starts again', async () => {
      await inRuntime('reclib-erase-wal-', async (rt) => {
        const r = rt.create(`remember ${marker}`, 'k1');
        rt.remove(r.id); // no worker running: as if the process was killed right after the commit
        assert.ok(fs.readFileSync(rt.wal).includes(marker), 'sanity: the WAL holds the text');
        const erased = rt.truncated();
        for (const w of rt.services.workers) w.start();
        await erased;
        assert.ok(!fs.readFileSync(rt.wal).includes(marker), 'the WAL holds no deleted text');
        assert.ok(!fs.readFileSync(rt.file).includes(marker), 'the database file holds no deleted text');
      });
    });

    it('through a symlink to the database file too (the WAL is beside the real file)', async () => {
      let real = '';
      const linked = (dir: string) => {
        real = path.join(dir, 'real.db');
        openRuntime(loadConfig({ db: real }, {})).core.db.close(); // makes the library
        fs.symlinkSync(real, path.join(dir, 'link.db'));
        return path.join(dir, 'link.db');
      };
      await inRuntime('reclib-erase-link-', async (rt) => {
        const started = rt.reported((r) => r.truncated === true);
        for (const w of rt.services.workers) w.start();
        await started;
        const r = rt.create(`remember ${marker}`, 'k1');
        rt.create('a later write', 'k2');
        assert.ok(fs.readFileSync(rt.wal).includes(marker), 'sanity: the WAL beside the real file holds the text');
        const erased = rt.reported((x) => x.truncated === true);
        rt.remove(r.id);
        await erased;
        assert.ok(!fs.readFileSync(rt.wal).includes(marker), 'the WAL holds no deleted text');
        assert.ok(!fs.readFileSync(real).includes(marker), 'the database file holds no deleted text');
      }, linked);
    });

    it('copies of moved rows left in unused page space are zeroed too, soon after the delete', async () => {
      await inRuntime('reclib-erase-moved-', async (rt) => {
        const startedClean = rt.reported((r) => r.scrubBacklog === 0);
        for (const w of rt.services.workers) w.start();
        await startedClean; // the whole-file pass of start-up
        const deleted = rt.moveAndDelete();
        // The cut of the WAL after the deletes, and slices once the writes pause. Looked at in the
        // files themselves: a report may come from a cut that ran in the middle of the deletes.
        const clean = () => stillIn(rt.file, deleted).length === 0 && stillIn(rt.wal, deleted).length === 0;
        for (let waited = 0; !clean() && waited < 30_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(stillIn(rt.file, deleted), [], 'the database file holds no deleted word');
        assert.deepEqual(stillIn(rt.wal, deleted), [], 'nor does the WAL');
        const { db } = rt.services.core;
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        assert.equal((db.prepare('SELECT count(*) AS n FROM recordings WHERE deleted_at IS NULL').get() as { n: number }).n, 800);
        assert.equal(rt.create('writes go on afterwards', 'after').revision, 1);
      });
    });

    it('what was deleted while serve did not run is zeroed by the whole-file pass of the next start', async () => {
      await inRuntime('reclib-erase-moved-', async (rt) => {
        const deleted = rt.moveAndDelete(); // no worker running: the CLI, or a server since stopped
        rt.services.core.db.pragma('wal_checkpoint(TRUNCATE)');
        assert.ok(stillIn(rt.file, deleted).length > 0, 'sanity: secure_delete left copies of moved rows in the file');
        const clean = rt.reported((r) => r.scrubBacklog === 0);
        for (const w of rt.services.workers) w.start();
        await clean;
        assert.deepEqual(stillIn(rt.file, deleted), [], 'the database file holds no deleted word');
        assert.equal(rt.services.core.db.pragma('integrity_check', { simple: true }), 'ok');
      });
    });

    it('a start skips the whole-file pass when the file still has the stamp of a clean stop, and not once it was written since', async () => {
      for (const writtenSince of [false, true]) {
        await inRuntime('reclib-erase-mark-', async (rt) => {
          const deleted = rt.moveAndDelete();
          rt.services.core.db.pragma('wal_checkpoint(TRUNCATE)');
          assert.ok(stillIn(rt.file, deleted).length > 0, 'sanity: secure_delete left copies of moved rows in the file');
          // A stamp that says "clean" of a file that is not: whether the start went through the file shows.
          rt.checkpointer.scrubbed = { stamp: fileStamp(rt.file), wholePassAt: Date.now() };
          if (writtenSince) {
            await new Promise((r) => setTimeout(r, 20)); // past the file times' granularity
            rt.create('written after the stop', 'later');
            rt.services.core.db.pragma('wal_checkpoint(TRUNCATE)');
          }
          const settled = rt.reported((r) => r.scrubBacklog === 0);
          for (const w of rt.services.workers) w.start();
          await settled;
          if (writtenSince) assert.deepEqual(stillIn(rt.file, deleted), [], 'a file written since its stamp is gone through');
          else assert.ok(stillIn(rt.file, deleted).length > 0, 'a file with its stamp is not gone through');
        });
      }
    });

    describe('a stop of serve', () => {
      /** `test` with the path of a database file in a fresh folder, removed afterwards. */
      const inFolder = async (prefix: string, test: (file: string) => Promise<void>) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
        try {
          await test(path.join(dir, 'r.db'));
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      };

      /** serve on `file` (durability normal: these write thousands of times, and cut no power), its writer thread ready. */
      const serveOn = async (file: string) => {
        const server = await startServer(testConfig({ db: file, port: 0, durability: 'normal' }), () => {});
        await server.writerThread!.ready;
        return server;
      };

      it('scrubs what the last writes left, and notes for the next start that the file is clean', async () => {
        await inFolder('reclib-erase-stop-', async (file) => {
          const server = await serveOn(file);
          // Written on the main thread's connection right before the stop: the checkpointer's own
          // slices (at quiet passes) have no time for them. Without its autocheckpoint, as serve's
          // writer's connection (whose backstop is ~200 MB of WAL): its checkpoints would let the
          // WAL start over behind the checkpointer's back, whose next start would then go through
          // the whole file again.
          server.services.core.db.pragma('wal_autocheckpoint = 0');
          const deleted = moveAndDeleteWith(server.services, writerOf(server.services));
          await server.close();
          assert.deepEqual(stillIn(file, deleted), [], 'the database file holds no deleted word');
          assert.ok(!fs.existsSync(`${file}-wal`), 'the WAL is gone with the close');
          const note = JSON.parse(fs.readFileSync(`${file}.scrubbed`, 'utf8')) as { stamp: unknown };
          assert.deepEqual(note.stamp, fileStamp(file), 'the note has the file as the stop left it');
          const again = await serveOn(file);
          assert.ok(!fs.existsSync(`${file}.scrubbed`), 'the next start takes the note');
          await again.close();
          assert.ok(fs.existsSync(`${file}.scrubbed`), 'and a clean stop leaves it again');
        });
      });

      it('the next start goes through the whole file only without a note its file matches', async () => {
        await inFolder('reclib-erase-note-', async (file) => {
          const services = openRuntime(loadConfig({ db: file, durability: 'normal' }, {}));
          const deleted = moveAndDeleteWith(services, writerOf(services));
          services.core.db.close(); // the last connection: the WAL is copied and removed
          assert.ok(stillIn(file, deleted).length > 0, 'sanity: secure_delete left copies of moved rows in the file');
          // A note that says "clean" of a file that is not: whether a start went through the file shows.
          assert.ok(markScrubbed(file));
          const trusting = await serveOn(file);
          await new Promise((r) => setTimeout(r, 1_000)); // quiet slices, had there been a pass
          await trusting.close();
          assert.ok(stillIn(file, deleted).length > 0, 'with the note, the start did not go through the file');
          fs.rmSync(`${file}.scrubbed`);
          const plain = await serveOn(file);
          await plain.close();
          assert.deepEqual(stillIn(file, deleted), [], 'without it, the start goes through the whole file (by the stop at the latest)');
        });
      });

      it('leaves no note when something commits after its last pass, and leaves the note it took when nothing wrote the file', async () => {
        await inFolder('reclib-erase-late-', async (file) => {
          const server = await serveOn(file);
          // A commit in the moment between the writer thread's close (the checkpointer's last pass)
          // and the server's own close: another process, or a retried key use of the main thread.
          const close = server.writerThread!.close.bind(server.writerThread);
          server.writerThread!.close = async () => {
            const ended = await close();
            assert.ok(ended, 'sanity: the last pass left every page scrubbed');
            server.services.auth.createAccount('late');
            return ended;
          };
          await server.close();
          assert.ok(!fs.existsSync(`${file}.scrubbed`), 'no note for a file written after its last scrub');
          // A start stopped before its writer thread started: the file is as the note said.
          assert.ok(markScrubbed(file));
          const note = fs.readFileSync(`${file}.scrubbed`, 'utf8');
          const quick = await startServer(testConfig({ db: file, port: 0 }), () => {});
          assert.equal(quick.writerThread!.running, false, 'sanity: stopped before its writer thread started');
          await quick.close();
          assert.equal(fs.readFileSync(`${file}.scrubbed`, 'utf8'), note, 'the note it took, left again');
        });
      });

      it("leaves no note when another connection commits just before the server's own TRUNCATE (which would copy it unseen)", async () => {
        await inFolder('reclib-erase-gap-', async (file) => {
          const server = await serveOn(file);
          const { db } = server.services.core;
          const pragma = db.pragma.bind(db);
          db.pragma = ((source: string, options?: object) => {
            if (source === 'wal_checkpoint(TRUNCATE)') {
              const other = openSqlite(file);
              other.pragma('user_version = 7');
              other.close();
            }
            return pragma(source, options as never);
          }) as typeof db.pragma;
          await server.close();
          assert.ok(!fs.existsSync(`${file}.scrubbed`), 'no note for a file another connection wrote after the last look');
        });
      });

      it('leaves no note when its last pass cannot cut the WAL back (a reader of another connection holds it)', async () => {
        await inFolder('reclib-erase-reader-', async (file) => {
          const server = await serveOn(file);
          server.services.auth.createAccount('someone');
          const reader = openSqlite(file);
          try {
            reader.exec('BEGIN');
            reader.prepare('SELECT count(*) FROM accounts').get();
            await server.close();
          } finally {
            reader.close();
          }
          assert.ok(!fs.existsSync(`${file}.scrubbed`), 'no note while a reader held the WAL');
        });
      });

      it('a note is not written while the WAL is there; one that cannot be read, or a week old, is dropped', async () => {
        await inFolder('reclib-erase-note-', async (file) => {
          const services = openRuntime(loadConfig({ db: file }, {}));
          assert.equal(markScrubbed(file), false, 'another connection has the file open');
          assert.ok(!fs.existsSync(`${file}.scrubbed`));
          services.core.db.close();
          const now = Date.now();
          assert.equal(markScrubbed(file, now), true);
          assert.deepEqual(takeScrubMark(file, now), { stamp: fileStamp(file), wholePassAt: now });
          assert.equal(takeScrubMark(file, now), undefined, 'a note vouches for one start');
          assert.equal(markScrubbed(file, now - WHOLE_PASS_EVERY_MS - 1), true);
          assert.equal(takeScrubMark(file, now), undefined, 'a whole-file pass once a week all the same');
          assert.ok(!fs.existsSync(`${file}.scrubbed`));
          fs.writeFileSync(`${file}.scrubbed`, `{"stamp":{"dev":"1"},"wholePassAt":${now}}`);
          assert.equal(takeScrubMark(file, now), undefined);
          assert.ok(!fs.existsSync(`${file}.scrubbed`));
        });
      });
    });
  });
});
