// The search index follows the table inside each write (schema triggers note the rows, the writer
// indexes them once per transaction) and is kept compact by FTS5's automerge inside writes and by
// small merge slices while the server is idle, never by a blocking 'optimize'.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../src/db/sqlite';
import { testConfig } from '../../src/config';
import { BUSY_TIMEOUT_MS, type Db } from '../../src/db/open';
import { openRuntime } from '../../src/runtime';
import { CHECK_EVERY_MS, COMPACT_EVERY_MS, COMPACT_QUIET_MS, IndexMerger, QUIET_MS, QUIET_REQUEST_BURST, QUIET_REQUESTS_PER_S, QUIET_UTILIZATION, SLICE_PAGES, type MergerOptions } from '../../src/services/index-merger';
import { startServer } from '../../src/server';
import { RecordingStore } from '../../src/store/recording-store';
import { largestLevel, segmentCount } from '../../src/store/fts-structure';
import { integrityCheck, matches } from '../helpers/fts';
import { harness, type Harness } from '../helpers/harness';

/** FTS5 index segments: its data rows carry the segment id above bit 37 (0 is the structure). */
const segments = (db: Db) => (db.prepare('SELECT count(DISTINCT id >> 37) AS n FROM recordings_fts_data WHERE id >> 37 > 0').get() as { n: number }).n;
const pending = (db: Db) => (db.prepare('SELECT count(*) AS n FROM recordings_fts_pending').get() as { n: number }).n;

/** A merger of `h`'s recordings on a fake clock: look(ms) moves the clock on and ticks; `clock.utilization` is the event loop's load. */
function mergerOnClock(h: Harness, options: Partial<MergerOptions> = {}) {
  const clock = { now: 0, utilization: 0 };
  const { core, recordings } = h.services;
  const merger = new IndexMerger(core, recordings.store, { signals: { now: () => clock.now, utilization: () => clock.utilization }, ...options });
  const look = (ms: number): boolean => {
    clock.now += ms;
    return merger.tick();
  };
  return { clock, look, merger, store: recordings.store };
}

describe('FTS upkeep', () => {
  it('writes run no merge slice of their own: the index merger does, once the server is idle', () => {
    const h = harness();
    const { recordings } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    let slices = 0;
    const original = recordings.store.mergeSlice.bind(recordings.store);
    recordings.store.mergeSlice = (pages: number) => {
      slices++;
      return original(pages);
    };
    for (let i = 0; i < 200; i++) recordings.create(principal, { type: 'clip', transcript: `words ${i}` }, `t-${i}`);
    assert.equal(slices, 0, 'no slice inside or after the writes');
    let worked = 0;
    while (recordings.merger.slice() && worked < 1000) worked++;
    assert.ok(worked >= 1, 'automerge left a merge in progress, which the merger finishes');
    assert.equal(recordings.merger.slice(), false);
  });

  it('maintenance is bounded merge slices (16 pages), never a blocking optimize', () => {
    const h = harness();
    const { core, recordings } = h.services;
    let now = 0;
    const merger = new IndexMerger(core, recordings.store, { signals: { now: () => now, utilization: () => 0 } });
    const pages: number[] = [];
    const original = recordings.store.mergeSlice.bind(recordings.store);
    recordings.store.mergeSlice = (n: number) => {
      pages.push(n);
      return original(n);
    };
    for (let t = 0; t <= QUIET_MS; t += CHECK_EVERY_MS) {
      now += CHECK_EVERY_MS;
      merger.tick();
    }
    assert.deepEqual(pages, [SLICE_PAGES]);
    assert.match(RecordingStore.MERGE_SQL, /'merge', \?/);
    assert.doesNotMatch(RecordingStore.MERGE_SQL, /optimize/);
  });

  it('on an empty index a merge slice reports no work', () => {
    assert.equal(harness().services.recordings.merger.slice(), false);
  });

  it('merge slices merge every level of four or more segments until nothing is left, then report no work', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    // Test setup only: with automerge off, each transaction's segment stays where it was written.
    core.db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', 0)");
    for (let i = 0; i < 60; i++) recordings.create(principal, { type: 'clip', transcript: `alpha beta ${i} gamma${i}` }, `k-${i}`);
    const before = segments(core.db);
    // One segment per write, up to FTS5's crisismerge (16 segments on a level merge at once).
    assert.ok(before >= 10, `segments left unmerged (${before})`);
    let worked = 0;
    while (recordings.merger.slice(1) && worked < 1000) worked++;
    assert.ok(worked >= 1, 'slices did work');
    assert.ok(segments(core.db) < 4, `levels merged (${before} → ${segments(core.db)} segments)`);
    assert.equal(recordings.merger.slice(), false, 'nothing left');
    // Four more writes: a level of 4 is merged when idle (usermerge 4, schema 7), where schema 6's
    // usermerge 8 left them as they were.
    const settled = segments(core.db);
    for (let i = 60; i < 64; i++) recordings.create(principal, { type: 'clip', transcript: `alpha beta ${i} gamma${i}` }, `k-${i}`);
    assert.equal(segments(core.db), settled + 4);
    while (recordings.merger.slice(1) && worked < 2000) worked++;
    assert.ok(segments(core.db) <= settled + 1, `the four merged (${settled + 4} → ${segments(core.db)} segments)`);
    assert.equal(core.db.prepare("SELECT v FROM recordings_fts_config WHERE k = 'usermerge'").pluck().get(), 4);
    assert.equal(recordings.merger.slice(), false, 'nothing left');
    integrityCheck(core.db);
    assert.equal(matches(core.db, 'alpha').length, 64);
    assert.deepEqual(recordings.list(principal, { q: 'gamma4', limit: 100 }).rows.length, 11);
    assert.deepEqual(recordings.list(principal, { q: 'gamma4', limit: 100 }).rows.length, 11);
  });

  /**
   * An index compacted into one segment (on level 2 or higher), then written to with automerge off
   * (test setup: each write's segment stays on level 0). `levels()` is the index's segments.
   */
  const compactedThenWritten = () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    core.db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', 0)");
    let k = 0;
    // A hundred words of its own in every recording: a write is a segment of about one leaf page,
    // and the compacted 300 are larger than anything the tests write after them.
    const write = (n: number) => {
      for (let i = 0; i < n; i++, k++) recordings.create(principal, { type: 'clip', transcript: `alpha ${Array.from({ length: 100 }, (_, j) => `u${k}x${j}`).join(' ')}` }, `f-${k}`);
    };
    write(300);
    core.writer.write(() => recordings.store.compactSlice(10_000));
    while (core.writer.write(() => recordings.store.continueCompaction(10_000)));
    const structure = () => recordings.store.structure();
    const largest = structure().levels.flatMap((l) => l.segments)[0]!;
    assert.equal(segmentCount(structure()), 1);
    assert.ok(largestLevel(structure()) >= 2, `the compacted segment on level ${largestLevel(structure())}`);
    const settle = () => {
      let slices = 0;
      while (recordings.merger.slice() && slices < 1000) slices++;
      return slices;
    };
    /** Leaf pages per level, as FTS5's structure has them. */
    const levels = () => structure().levels.map((l) => l.segments.map((s) => s.pages));
    /** FTS5's usermerge as the table keeps it (the fold sets 2 for one statement only). */
    const usermerge = () => core.db.prepare("SELECT v FROM recordings_fts_config WHERE k = 'usermerge'").pluck().get();
    const check = () => {
      integrityCheck(core.db);
      assert.equal(matches(core.db, 'alpha').length, k);
      assert.equal(usermerge(), 4, 'usermerge is 4 again after every fold');
    };
    return { core, recordings, write, settle, levels, structure, largest, check, usermerge };
  };

  it('idle merging folds the small levels below the largest segment into one, which usermerge 4 left as they were', () => {
    const { write, settle, structure, largest, levels, check } = compactedThenWritten();
    const top = largestLevel(structure());
    write(3); // three segments on level 0: fewer than usermerge 4
    assert.equal(segmentCount(structure()), 4);
    assert.ok(settle() >= 1);
    assert.equal(segmentCount(structure()), 2, `folded: ${JSON.stringify(levels())}`);
    assert.deepEqual(structure().levels[top]!.segments, [largest], 'the largest segment untouched, alone on its level');
    check();
  });

  it('a fold begins its merge with a slice of one page, so no statement goes on to merge the level below the largest segment', () => {
    const { write, settle, structure, largest, levels, check } = compactedThenWritten();
    const top = largestLevel(structure());
    // Bursts of two: each is folded up to the level below the largest segment. Once that level holds
    // one, the next fold's output lands beside it, and with a minimum of 2 FTS5 would go on in the
    // same statement to merge them (and later the largest segment with them).
    for (let burst = 0; burst < 20 && structure().levels[top - 1]!.segments.length < 2; burst++) {
      write(2);
      settle();
      assert.ok(structure().levels.slice(0, top - 1).every((l) => l.segments.length <= 1), `burst ${burst}: at most one on each level further down: ${JSON.stringify(levels())}`);
    }
    const after = structure();
    assert.deepEqual(after.levels[top]!.segments, [largest], `the largest segment untouched: ${JSON.stringify(levels())}`);
    assert.equal(after.levels[top - 1]!.segments.length, 2, `two on the level below it: ${JSON.stringify(levels())}`);
    assert.ok(after.levels.every((l) => l.merging === 0), 'no merge begun');
    check();
  });

  it('a fold on a full disk fails as a full disk (writes answer 503), not as a savepoint the failure took with it', () => {
    const { core, write, structure, recordings, usermerge } = compactedThenWritten();
    write(3);
    const before = JSON.stringify(structure());
    core.db.exec('VACUUM'); // no free pages left for the merge to use
    core.db.pragma(`max_page_count = ${core.db.pragma('page_count', { simple: true }) as number}`);
    assert.throws(() => core.writer.writeNow(() => recordings.store.mergeSlice(SLICE_PAGES)), (e: Error & { status?: number }) => e.status === 503 && /disk is full/.test(e.message));
    assert.equal(core.writer.health.status?.failing, 'disk_full');
    assert.equal(core.db.inTransaction, false);
    assert.equal(JSON.stringify(structure()), before, 'nothing of the slice kept');
    assert.equal(usermerge(), 4);
  });

  it('bursts of writes and quiet spells, over and over: fewer segments than usermerge 4 alone leaves, and the largest rewritten only by usermerge 4', () => {
    const fold = compactedThenWritten();
    const usual = compactedThenWritten();
    const top = largestLevel(fold.structure());
    // FTS5's 'merge' alone, with usermerge 4: the policy before the fold.
    const settleUsual = () => {
      for (let n = 0; n < 1000 && usual.core.writer.write(() => usual.recordings.store.ftsMerge(SLICE_PAGES)); n++);
    };
    let withFold = 0;
    let without = 0;
    for (let burst = 0; burst < 24; burst++) {
      fold.write(2 + (burst % 3));
      fold.settle();
      usual.write(2 + (burst % 3));
      settleUsual();
      withFold += segmentCount(fold.structure());
      without += segmentCount(usual.structure());
      const s = fold.structure();
      const shape = JSON.stringify(fold.levels());
      // The fold leaves one on a level further down, two where FTS5 picks the level below the
      // largest first (fts-structure.ts), and that level keeps FTS5's rule: merged at 4.
      assert.ok(s.levels.slice(0, top - 1).every((l) => l.segments.length <= 2), `burst ${burst}: ${shape}`);
      const below = s.levels[top - 1]!.segments.length;
      assert.ok(below <= 3, `burst ${burst}: ${shape}`);
      assert.ok(s.levels[top]!.segments.some((x) => x.id === fold.largest.id && x.pages === fold.largest.pages), `burst ${burst}: the largest segment rewritten: ${shape}`);
      // Another segment beside the largest only as FTS5's usual rule puts one there: four on the
      // level below merged, and a burst adds at most one to that level.
      assert.ok(4 * (s.levels[top]!.segments.length - 1) + below <= burst + 1, `burst ${burst}: ${shape}`);
    }
    assert.ok(withFold < without, `segments at rest over the bursts: ${withFold} with the fold, ${without} without`);
    fold.check();
    usual.check();
  });

  it('after a long quiet spell with nothing left to merge, the index is compacted into one segment, once a week at most and only after new text', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    core.db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', 0)"); // test setup: segments stay apart
    const write = (from: number, to: number) => {
      for (let i = from; i < to; i++) recordings.create(principal, { type: 'clip', transcript: `alpha beta ${i} gamma${i}` }, `c-${i}`);
      merger.noteWrite();
    };
    let now = 0;
    const merger = new IndexMerger(core, recordings.store, { signals: { now: () => now, utilization: () => 0 } });
    let compactions = 0;
    const compact = recordings.store.compactSlice.bind(recordings.store);
    recordings.store.compactSlice = (pages: number) => {
      compactions++;
      return compact(pages);
    };
    const quiet = (ms: number) => {
      for (let t = 0; t < ms; t += CHECK_EVERY_MS) {
        now += CHECK_EVERY_MS;
        merger.tick();
      }
    };
    write(0, 30);
    quiet(QUIET_MS + 5 * CHECK_EVERY_MS);
    write(30, 32); // two more segments: with the first, a level of three, which the usual merging leaves
    quiet(QUIET_MS + 5 * CHECK_EVERY_MS);
    const merged = segments(core.db);
    assert.ok(merged > 1, `the usual merging leaves levels of up to 3 (${merged} segments)`);
    quiet(COMPACT_QUIET_MS * 2);
    assert.equal(compactions, 0, 'not within a week of the start');
    now += COMPACT_EVERY_MS;
    quiet(COMPACT_QUIET_MS - CHECK_EVERY_MS);
    assert.equal(compactions, 0, 'not before a minute of quiet');
    quiet(2 * CHECK_EVERY_MS);
    assert.ok(compactions >= 1);
    quiet(QUIET_MS);
    assert.equal(segments(core.db), 1, 'compacted');
    integrityCheck(core.db);
    assert.equal(matches(core.db, 'alpha').length, 32);
    const after = compactions;
    now += COMPACT_EVERY_MS;
    quiet(COMPACT_QUIET_MS * 2);
    assert.equal(compactions, after, 'nothing new: not again');
    write(32, 40);
    quiet(COMPACT_QUIET_MS * 2);
    assert.equal(compactions, after + 1, 'new text and a week since the last: again');
    quiet(COMPACT_QUIET_MS * 2);
    assert.equal(compactions, after + 1, 'done: one slice, no more');
    write(40, 44);
    quiet(COMPACT_QUIET_MS * 2);
    assert.equal(compactions, after + 1, 'new text, but within a week of the last');
    assert.equal(matches(core.db, 'alpha').length, 44);
  });

  it('a compaction interrupted by work goes on at the next ordinary quiet spell until it is done', () => {
    const { clock, look, merger, store } = mergerOnClock(harness());
    let left = 3;
    const slices: string[] = [];
    store.compactSlice = () => {
      slices.push('compact');
      return left-- > 0;
    };
    store.continueCompaction = () => {
      slices.push('continue');
      return left-- > 0;
    };
    store.mergeSlice = () => {
      slices.push('merge');
      return false;
    };
    merger.noteWrite();
    clock.now += COMPACT_EVERY_MS;
    for (let t = 0; t <= QUIET_MS; t += CHECK_EVERY_MS) look(CHECK_EVERY_MS); // the ordinary merging: nothing to do
    for (let t = 0; t <= COMPACT_QUIET_MS; t += CHECK_EVERY_MS) if (look(CHECK_EVERY_MS)) break;
    assert.deepEqual(slices, ['merge', 'compact'], 'a minute of quiet: the compaction begins');
    clock.utilization = 1;
    look(10); // work: the series ends
    clock.utilization = 0;
    for (let t = CHECK_EVERY_MS; t < QUIET_MS; t += CHECK_EVERY_MS) look(CHECK_EVERY_MS);
    assert.deepEqual(slices, ['merge', 'compact'], 'not before the ordinary 2 s of quiet');
    for (let i = 0; i < 40; i++) look(10);
    // Continued as an ordinary merge goes on with the one in progress, not planned again (each
    // plan adds a level: continueCompaction says why).
    assert.deepEqual(slices, ['merge', 'compact', 'continue', 'continue', 'continue'], 'then on until a slice finds nothing left, and no more');
  });

  it('a compaction resumed between writes stays on one new level (planned again each time, the index reached 64 levels) and loses nothing', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    let k = 0;
    const write = (n: number) => {
      for (let i = 0; i < n; i++, k++) recordings.create(principal, { type: 'clip', transcript: `alpha beta w${k} z${k % 7} filler text number ${k}` }, `l${k}`);
    };
    const levels = () => {
      const block = core.db.prepare('SELECT block FROM recordings_fts_data WHERE id = 10').pluck().get() as Buffer;
      let o = block.length > 8 && block.readUInt32BE(4) === 0xffffffff ? 8 : 4;
      let v = 0;
      for (;;) {
        const c = block[o++]!;
        v = v * 128 + (c & 0x7f);
        if (!(c & 0x80)) return v;
      }
    };
    write(300);
    const before = levels();
    core.writer.write(() => recordings.store.compactSlice(1));
    for (let cycle = 0; cycle < 60; cycle++) {
      core.writer.write(() => recordings.store.continueCompaction(1));
      write(3);
    }
    assert.ok(levels() <= before + 3, `${before} → ${levels()} levels`);
    integrityCheck(core.db);
    assert.equal(matches(core.db, 'alpha').length, k);
  });

  it('the merger waits for 2 s of quiet, and stops at the first look that saw work or came late', () => {
    const { clock, look, merger, store } = mergerOnClock(harness());
    let slices = 0;
    store.mergeSlice = () => {
      slices++;
      return true; // always more to do
    };
    const quietSpell = () => {
      for (let t = CHECK_EVERY_MS; t < QUIET_MS; t += CHECK_EVERY_MS) look(CHECK_EVERY_MS);
    };
    merger.noteWrite();
    quietSpell();
    assert.equal(slices, 0, 'quiet, but not for long enough yet');
    assert.equal(look(CHECK_EVERY_MS), true);
    assert.equal(slices, 1, `quiet for ${QUIET_MS} ms: a slice`);
    look(10);
    assert.equal(slices, 2, 'still quiet in the gap: the next slice');
    clock.utilization = QUIET_UTILIZATION + 0.01;
    assert.equal(look(10), false);
    assert.equal(slices, 2, 'a request in the gap stops it');
    clock.utilization = 0;
    quietSpell();
    assert.equal(slices, 2, 'and it waits for a whole quiet spell again');
    look(CHECK_EVERY_MS);
    assert.equal(slices, 3);
    look(60_000);
    assert.equal(slices, 3, 'a look a minute late (suspended process, blocked loop) is not quiet');
    quietSpell();
    look(CHECK_EVERY_MS);
    assert.equal(slices, 4);
    store.mergeSlice = () => {
      slices++;
      return false; // nothing left
    };
    look(10);
    look(10);
    assert.equal(slices, 5, 'a slice that found nothing to do: none until the next index write');
    merger.noteWrite();
    look(10);
    assert.equal(slices, 6);
  });

  it('on the writer thread, requests the main thread answers are work too, beyond a light rate', () => {
    let mainRequests = 0;
    const { look, merger, store } = mergerOnClock(harness(), { requestsElsewhere: () => mainRequests });
    let slices = 0;
    store.mergeSlice = () => {
      slices++;
      return true;
    };
    merger.noteWrite();
    // Half again the light rate: reads keep arriving on the main thread while this thread's own
    // loop is idle.
    const busy = (1.5 * QUIET_REQUESTS_PER_S * CHECK_EVERY_MS) / 1000;
    for (let t = 0; t < QUIET_MS + CHECK_EVERY_MS; t += CHECK_EVERY_MS) {
      mainRequests += busy;
      look(CHECK_EVERY_MS);
    }
    assert.equal(slices, 0, 'no merge while the main thread answers more than the light rate');
    let quietLooks = 0;
    while (slices === 0 && quietLooks < 100) {
      look(CHECK_EVERY_MS);
      quietLooks++;
    }
    assert.equal(slices, 1, 'both threads quiet: a slice');
    assert.ok(quietLooks * CHECK_EVERY_MS >= QUIET_MS, `after ${QUIET_MS} ms of quiet on both threads, not before (${quietLooks} looks)`);
    // A burst of traffic in the gap after a slice (more than the bucket holds) ends the series.
    mainRequests += QUIET_REQUEST_BURST + 1;
    assert.equal(look(10), false);
    assert.equal(slices, 1, 'traffic on the main thread in the gap stops the series');
  });

  /** A merger whose slices are counted, with a count of the main thread's requests to drive. */
  const countedWithStore = (first = 0) => {
    const main = { requests: first };
    const m = mergerOnClock(harness(), { requestsElsewhere: () => main.requests | 0 });
    let slices = 0;
    // What a slice does besides being counted (a test may make it take time or see requests).
    const store = { mergeSlice: (_pages: number) => true };
    m.store.mergeSlice = (pages: number) => {
      slices++;
      return store.mergeSlice(pages);
    };
    m.merger.noteWrite();
    /** Looks every `every` ms for up to `ms`, `perLook` requests before each; the slices run. */
    const run = (ms: number, perLook: number, every = CHECK_EVERY_MS) => {
      for (let t = 0; t < ms; t += every) {
        main.requests += perLook;
        m.look(every);
      }
      return slices;
    };
    return { main, run, look: m.look, slices: () => slices, store, clock: m.clock };
  };
  const counted = countedWithStore;

  it('a poller asking once a second does not keep the index from being merged; a burst ends a series of slices', () => {
    const { main, look, slices } = counted();
    let t = 0;
    // A request on the main thread every second: merging starts once the quiet time has passed.
    while (slices() === 0 && t < 2 * QUIET_MS) {
      t += CHECK_EVERY_MS;
      if (t % 1000 === 0) main.requests++;
      look(CHECK_EVERY_MS);
    }
    assert.equal(slices(), 1, 'a request a second is a quiet server');
    assert.ok(t >= QUIET_MS, `not before ${QUIET_MS} ms (${t})`);
    // The series goes on in short gaps; the poller's requests, during slices or in a gap, do not
    // end it.
    main.requests++;
    assert.equal(look(10), true);
    assert.equal(slices(), 2);
    // More at once than the bucket holds ends it.
    main.requests += QUIET_REQUEST_BURST + 1;
    assert.equal(look(10), false);
    assert.equal(slices(), 2, 'a burst of requests in the gap after a slice ends the series');
  });

  it('the light rate is a rate: requests at exactly it keep merging for a minute with looks that come early or late; bursts up to the bucket and no more', () => {
    const { main, look, slices } = counted();
    // Requests at exactly QUIET_REQUESTS_PER_S, in time; looks every 95-105 ms as timers fire them.
    let t = 0;
    let looks = 0;
    let slicesAfterQuiet = 0;
    while (t < 60_000) {
      const every = CHECK_EVERY_MS - 5 + (looks % 11);
      t += every;
      main.requests = Math.floor((QUIET_REQUESTS_PER_S * t) / 1000);
      const before = slices();
      look(every);
      looks++;
      if (t > QUIET_MS + CHECK_EVERY_MS && slices() > before) slicesAfterQuiet++;
    }
    const looksAfterQuiet = Math.floor((60_000 - QUIET_MS - CHECK_EVERY_MS) / CHECK_EVERY_MS);
    assert.ok(slicesAfterQuiet >= looksAfterQuiet * 0.95, `${QUIET_REQUESTS_PER_S} a second for a minute: a slice at ${slicesAfterQuiet} of ~${looksAfterQuiet} looks`);
    assert.equal(counted().run(2 * QUIET_MS, (QUIET_REQUESTS_PER_S * CHECK_EVERY_MS) / 1000 + 1), 0, 'one more a look than the rate: no merge');
    // A dashboard refreshing a few endpoints at once, once a second: a look takes up to the bucket
    // and what its own time refilled, and not one more.
    const dashboard = (atOnce: number) => {
      const d = counted();
      for (let at = CHECK_EVERY_MS; at <= 3 * QUIET_MS; at += CHECK_EVERY_MS) {
        if (at % 1000 === 0) d.main.requests += atOnce;
        d.look(CHECK_EVERY_MS);
      }
      return d.slices();
    };
    assert.ok(dashboard(QUIET_REQUEST_BURST) >= 1, `${QUIET_REQUEST_BURST} at once, once a second`);
    const refilled = (QUIET_REQUESTS_PER_S * CHECK_EVERY_MS) / 1000;
    assert.ok(dashboard(QUIET_REQUEST_BURST + refilled) >= 1, `${QUIET_REQUEST_BURST + refilled} at once, once a second`);
    assert.equal(dashboard(QUIET_REQUEST_BURST + refilled + 1), 0, `${QUIET_REQUEST_BURST + refilled + 1} at once, once a second`);
  });

  it('requests the main thread answers during a slice count: a light rate during a long slice goes on, more than the rate and the bucket ends the series', () => {
    const { main, look, slices, store, clock } = counted();
    // Each slice takes 600 ms (a common word at a million recordings); `during` requests arrive meanwhile.
    let during = 0;
    store.mergeSlice = () => {
      clock.now += 600;
      main.requests += during;
      return true;
    };
    while (slices() === 0) look(CHECK_EVERY_MS);
    // 10 a second during a 600 ms slice: 6, more than the bucket holds at once but within the rate.
    during = 6;
    assert.equal(look(10), true, 'the slice after a quiet spell');
    assert.equal(look(10), true, 'a light rate during a long slice: the series goes on');
    during = Math.ceil((QUIET_REQUESTS_PER_S * 610) / 1000) + QUIET_REQUEST_BURST + 1;
    assert.equal(look(10), true, 'this slice runs; the requests during it are counted at the next look');
    assert.equal(look(10), false, 'more than the rate and the bucket during the slice: the series ends');
  });

  it('the count of requests elsewhere wraps as an Int32 does', () => {
    // From 2^31 - 5: the count passes 2^31 and reads negative; five requests a second are light.
    const { main, look, slices, run } = counted(2 ** 31 - 5);
    let t = 0;
    while (slices() === 0 && t < 2 * QUIET_MS) {
      t += CHECK_EVERY_MS;
      if (t % 200 === 0) main.requests++;
      look(CHECK_EVERY_MS);
    }
    assert.ok(main.requests > 2 ** 31, 'the count wrapped');
    assert.equal(slices(), 1);
    // Past the wrap, traffic over the rate is still work: the series ends once the bucket is
    // spent, and no slice follows while the traffic lasts.
    const over = (QUIET_REQUESTS_PER_S * CHECK_EVERY_MS) / 1000 + 1;
    run(QUIET_MS, over);
    const spent = slices();
    assert.ok(spent <= 1 + QUIET_REQUEST_BURST + 1, `the series ended (${spent} slices)`);
    run(2 * QUIET_MS, over);
    assert.equal(slices(), spent, 'no slice under traffic after the wrap');
  });

  it('a slice never waits for a write lock held by another process, and the work stays pending', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-merge-')), 'a.db');
    const services = openRuntime(testConfig({ db: file }));
    let now = 0;
    const merger = new IndexMerger(services.core, services.recordings.store, { signals: { now: () => now, utilization: () => 0 } });
    const other = openSqlite(file);
    other.exec('BEGIN IMMEDIATE');
    const t0 = performance.now();
    for (let t = 0; t <= QUIET_MS; t += CHECK_EVERY_MS) {
      now += CHECK_EVERY_MS;
      merger.tick();
    }
    assert.ok(performance.now() - t0 < 1_000, 'busy_timeout (5 s) was not waited for');
    assert.equal(merger.slice(), undefined, 'busy: no slice');
    assert.equal(services.core.db.pragma('busy_timeout', { simple: true }), BUSY_TIMEOUT_MS, 'busy_timeout restored');
    other.exec('COMMIT');
    other.close();
    let slices = 0;
    services.recordings.store.mergeSlice = () => {
      slices++;
      return false;
    };
    for (let t = 0; t <= QUIET_MS; t += CHECK_EVERY_MS) {
      now += CHECK_EVERY_MS;
      merger.tick();
    }
    assert.equal(slices, 1, 'still pending after the busy attempts: tried again after a quiet spell');
    services.core.db.close();
  });

  it('a failing merge slice is skipped (maintenance only)', () => {
    const h = harness();
    const { recordings } = h.services;
    recordings.store.mergeSlice = () => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    };
    assert.equal(recordings.merger.slice(), undefined);
  });

  it('serve runs the merger in the writer thread, beside the writes it merges after', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-merge-')), 'a.db');
    const server = await startServer({ ...testConfig({ db: file }), port: 0 }, () => {});
    try {
      assert.ok(server.writerThread);
      assert.ok((await server.writerThread.ready).includes(server.services.recordings.merger.constructor.name));
    } finally {
      await server.close();
    }
  });

  it('on its real timer and event-loop signals, the merger settles an index left with unmerged levels', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-merge-')), 'a.db');
    const services = openRuntime(testConfig({ db: file }));
    const principal = services.auth.authenticate(services.auth.createKey(services.auth.createAccount('o').id, { name: 'k', permissions: ['recordings:create'] }).secret);
    services.core.db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', 0)");
    for (let i = 0; i < 40; i++) services.recordings.create(principal, { type: 'clip', transcript: `delta ${i}` }, `k-${i}`);
    const before = segments(services.core.db);
    assert.ok(before >= 10, `segments left unmerged (${before})`);
    const merger = new IndexMerger(services.core, services.recordings.store, { quietMs: 300 });
    merger.start();
    try {
      const deadline = Date.now() + 10_000;
      while (segments(services.core.db) >= 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(segments(services.core.db) < 8, `merged in idle time (${before} → ${segments(services.core.db)})`);
    } finally {
      await merger.stop();
      services.core.db.close();
    }
  });

  it('a grouped write that fails after its edit asked the index leaves the other members\' text indexed', async () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const old = recordings.create(principal, { type: 'memo', transcript: 'an older note' }, 'old').row;
    // One group: a create (noted for indexing at commit), then an edit whose vocabulary upkeep
    // indexes what is noted so far, and fails; its savepoint is rolled back, and the create's
    // note with it comes back.
    const created = core.writer.writeGrouped(() => recordings.create(principal, { type: 'clip', transcript: 'buy oat milk' }, 'new').row);
    const failed = core.writer.writeGrouped(() => {
      recordings.update(principal, old.id, { transcript: 'a changed note' }, 1);
      throw new Error('fails after the edit');
    });
    const row = await created;
    await assert.rejects(failed, /fails after the edit/);
    assert.equal(pending(core.db), 0, 'nothing left noted after the commit');
    assert.deepEqual(matches(core.db, 'oat'), [row.seq]);
    assert.deepEqual(matches(core.db, 'older'), [old.seq]);
    integrityCheck(core.db);
  });

  it('the index passes FTS5 integrity-check after creates, edits and deletes', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const rows = Array.from({ length: 40 }, (_, i) =>
      recordings.create(principal, { type: 'memo', title: i % 3 ? `title ${i}` : '', transcript: i % 4 ? `spoken words number ${i}` : '' }, `k-${i}`).row,
    );
    rows.forEach((r, i) => {
      if (i % 5 === 0) recordings.remove(principal, r.id, 1);
      else if (i % 2 === 0) recordings.update(principal, r.id, { transcript: i % 4 ? '' : `new words ${i}`, title: 'edited' }, 1);
    });
    integrityCheck(core.db);
    const indexed = core.db.prepare("SELECT count(*) AS n FROM recordings_fts WHERE recordings_fts MATCH 'edited OR words OR title'").get() as { n: number };
    const live = core.db.prepare("SELECT count(*) AS n FROM recordings WHERE deleted_at IS NULL AND (title <> '' OR transcript <> '')").get() as { n: number };
    assert.equal(indexed.n, live.n);
  });

  it('the text written in one transaction becomes one index segment, not one per recording', async () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    core.writer.write(() => {
      for (let i = 0; i < 12; i++) recordings.create(principal, { type: 'clip', transcript: `batch one item ${i}` }, `a-${i}`);
    });
    assert.equal(segments(core.db), 1);
    // Concurrent requests committed together by group commit, each in its own savepoint.
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        core.writer.writeGrouped(() => recordings.create(principal, { type: 'clip', transcript: `batch two item ${i}` }, `b-${i}`)),
      ),
    );
    assert.equal(segments(core.db), 2);
    assert.equal(pending(core.db), 0, 'nothing is left noted after a commit');
    assert.equal(matches(core.db, 'batch AND item').length, 24);
    integrityCheck(core.db);
  });

  it('a create, edits and a delete of the same recordings inside one transaction leave the index exact', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const [a, b, c] = core.writer.write(() => {
      const a = recordings.create(principal, { type: 'memo', transcript: 'first draft alpha' }, 'a').row;
      recordings.update(principal, a.id, { transcript: 'second draft omega' }, 1);
      const b = recordings.create(principal, { type: 'memo', transcript: 'doomed bravo' }, 'b').row;
      recordings.remove(principal, b.id, 1);
      const c = recordings.create(principal, { type: 'memo' }, 'c').row; // no text: not noted
      recordings.update(principal, c.id, { title: 'charlie later' }, 1);
      return [a, b, c];
    });
    assert.deepEqual(matches(core.db, 'alpha OR first OR bravo OR doomed'), []);
    assert.deepEqual(matches(core.db, 'omega'), [a!.seq]);
    assert.deepEqual(matches(core.db, 'charlie'), [c!.seq]);
    assert.equal(b!.seq > 0, true);
    assert.equal(pending(core.db), 0);
    integrityCheck(core.db);
    // Later transactions edit and delete what the first one indexed.
    recordings.update(principal, a!.id, { transcript: 'third draft sigma', title: 'renamed' }, 2);
    recordings.update(principal, c!.id, { title: '' }, 2);
    assert.deepEqual(matches(core.db, 'omega OR charlie'), []);
    assert.deepEqual(matches(core.db, 'sigma AND renamed'), [a!.seq]);
    recordings.remove(principal, a!.id, 3);
    assert.deepEqual(matches(core.db, 'sigma OR renamed OR draft'), []);
    integrityCheck(core.db);
  });

  it('a grouped write that fails takes its noted text back with it; the others are indexed', async () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const results = await Promise.allSettled([
      core.writer.writeGrouped(() => recordings.create(principal, { type: 'clip', transcript: 'kept one' }, 'k1')),
      core.writer.writeGrouped(() => {
        recordings.create(principal, { type: 'clip', transcript: 'rolled back' }, 'k2');
        throw new Error('fails after its insert');
      }),
      core.writer.writeGrouped(() => recordings.create(principal, { type: 'clip', transcript: 'kept two' }, 'k3')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(matches(core.db, 'kept').length, 2);
    assert.deepEqual(matches(core.db, 'rolled'), []);
    assert.equal(pending(core.db), 0);
    integrityCheck(core.db);
  });

  it('indexing the noted rows reads only them: one rowid lookup each, never a scan of recordings (EXPLAIN QUERY PLAN)', () => {
    const h = harness();
    const plan = (h.services.core.db.prepare(`EXPLAIN QUERY PLAN ${RecordingStore.INDEX_PENDING_SQL}`).all() as Array<{ detail: string }>).map((r) => r.detail);
    assert.deepEqual(plan, ['SCAN p', 'SEARCH r USING INTEGER PRIMARY KEY (rowid=?)']);
  });

  it('the index merges a level at 8 segments inside writes (automerge 8) and at 4 when idle (usermerge 4), with secure-delete on', () => {
    const h = harness();
    const config = Object.fromEntries((h.services.core.db.prepare('SELECT k, v FROM recordings_fts_config').all() as Array<{ k: string; v: number }>).map((r) => [r.k, r.v]));
    assert.equal(config.automerge, 8);
    assert.equal(config.usermerge, 4);
    assert.equal(config['secure-delete'], 1);
  });

  it('a word whose last indexed holder is deleted or edited stays searchable by prefix when the same transaction created another holder', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const old = recordings.create(principal, { type: 'clip', transcript: 'the zebrafish tank' }, 'old').row;
    const edited = recordings.create(principal, { type: 'clip', transcript: 'axolotlish pond' }, 'edited').row;
    const [fresh, fresh2] = core.writer.write(() => {
      const fresh = recordings.create(principal, { type: 'clip', transcript: 'a new zebrafish' }, 'fresh').row;
      const fresh2 = recordings.create(principal, { type: 'clip', transcript: 'more axolotlish' }, 'fresh2').row;
      recordings.remove(principal, old.id, 1);
      recordings.update(principal, edited.id, { transcript: 'plain pond' }, 1);
      return [fresh, fresh2];
    });
    const terms = core.db.prepare('SELECT term FROM recording_terms WHERE term IN (?, ?)').pluck().all('zebrafish', 'axolotlish');
    assert.deepEqual(terms.sort(), ['axolotlish', 'zebrafish']);
    assert.deepEqual(recordings.list(principal, { q: 'zebraf', limit: 10 }).rows.map((r) => r.id), [fresh!.id]);
    assert.deepEqual(recordings.list(principal, { q: 'axolot', limit: 10 }).rows.map((r) => r.id), [fresh2!.id]);
    integrityCheck(core.db);
  });

  it('rows noted but never indexed by another writer (an older reclib, a sqlite3 shell) are indexed when reclib opens the file', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-pending-')), 'p.db');
    const first = openRuntime(testConfig({ db: file }));
    const account = first.auth.createAccount('a');
    const principal = first.auth.authenticate(first.auth.createKey(account.id, { name: 'k', permissions: ['recordings:create', 'recordings:read'] }).secret);
    const row = first.recordings.create(principal, { type: 'clip', transcript: 'seed words' }, 'k1').row;
    first.core.db.close();
    // A writer that knows the triggers but not the flush: the row is noted, not indexed.
    const raw = openSqlite(file);
    raw.prepare("INSERT INTO recordings (seq, id, account_id, integration_id, type, title, transcript, recorded_at, created_at, updated_at, revision, status, body_hash) SELECT seq - 1, 'rec_shell', account_id, integration_id, 'clip', '', 'hello from the shell', recorded_at, created_at, updated_at, 1, 'ready', 'x' FROM recordings WHERE id = ?").run(row.id);
    assert.equal(raw.prepare('SELECT count(*) FROM recordings_fts_pending').pluck().get(), 1);
    raw.close();
    const again = openRuntime(testConfig({ db: file }));
    assert.equal(pending(again.core.db), 0);
    assert.deepEqual(again.recordings.list(principal, { q: 'shell', limit: 10 }).rows.map((r) => r.id), ['rec_shell']);
    integrityCheck(again.core.db);
    again.core.db.close();
  });
});

describe('the vocabulary after grouped edits', () => {
  it('a word one member of a group adds and the next takes out is not remembered as listed: a later recording with it is found by its prefix', async () => {
    const h = harness();
    const { recordings, core } = h.services;
    const p = h.services.auth.authenticate(h.key());
    const listed = (t: string) => core.db.prepare('SELECT 1 FROM recording_terms WHERE term = ?').get(t) !== undefined;
    const r = recordings.create(p, { type: 'clip', transcript: 'hello' }, 'a').row;
    // Committed together: the first adds "zebra", the second (the next revision) takes it out.
    await Promise.all([
      recordings.updateGrouped(p, r.id, { transcript: 'hello zebra' }, r.revision),
      recordings.updateGrouped(p, r.id, { transcript: 'hello' }, r.revision + 1),
    ]);
    assert.equal(listed('zebra'), false);
    const n = recordings.create(p, { type: 'clip', transcript: 'zebra crossing' }, 'b').row;
    assert.equal(listed('zebra'), true, 'listed again with the new recording');
    const token = h.key();
    const res = await h.req('GET', '/api/v2/recordings?q=zeb', { token });
    assert.deepEqual(res.json.recordings.map((x: { id: string }) => x.id), [n.id]);
  });
});
