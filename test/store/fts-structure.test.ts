// The FTS5 structure record as the idle merger reads it, and the fold's rule (which levels it may
// merge, and when a slice went further than that), on hand-made records.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { decodeFtsStructure, foldMayMerge, foldOverstepped, largestLevel, nextMergeLevel, readFtsStructure, segmentCount, type FtsSegment, type FtsStructure } from '../../src/store/fts-structure';

/** SQLite's varint: 7 bits a byte, high bit set on all but the last, the ninth byte whole. */
function varint(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  let v = n;
  const groups: number[] = [];
  while (v > 0) {
    groups.unshift(v % 128);
    v = Math.floor(v / 128);
  }
  groups.forEach((g, i) => out.push(i < groups.length - 1 ? g | 0x80 : g));
  return out;
}

/** A structure record: [merging, [id, first, last][]] per level. */
function record(levels: Array<[number, Array<[number, number, number]>]>, opts: { v2?: boolean; writeCounter?: number } = {}): Uint8Array {
  const bytes = [0, 0, 0, 7]; // cookie
  if (opts.v2) bytes.push(0xff, 0x00, 0x00, 0x01); // FTS5_STRUCTURE_V2
  bytes.push(...varint(levels.length), ...varint(levels.reduce((n, l) => n + l[1].length, 0)), ...varint(opts.writeCounter ?? 0));
  for (const [merging, segs] of levels) {
    bytes.push(...varint(merging), ...varint(segs.length));
    for (const [id, first, last] of segs) {
      bytes.push(...varint(id), ...varint(first), ...varint(last));
      if (opts.v2) bytes.push(...varint(1), ...varint(300), ...varint(0), ...varint(0), ...varint(1000));
    }
  }
  return Uint8Array.from(bytes);
}

/** A structure from leaf-page counts per level (ids counted up from 1), with `merging` on the levels named. */
function shape(levels: number[][], merging: Record<number, number> = {}): FtsStructure {
  let id = 1;
  return { writeCounter: 0, levels: levels.map((pages, i) => ({ merging: merging[i] ?? 0, segments: pages.map((p) => ({ id: id++, pages: p })) })) };
}

describe('the FTS5 structure record', () => {
  it('is decoded level by level, with each segment\'s id and leaf pages, in both record versions', () => {
    const levels: Array<[number, Array<[number, number, number]>]> = [
      [0, [[3, 1, 1], [4, 1, 2]]],
      [2, [[1, 1, 70], [2, 1, 300]]],
      [0, [[5, 1, 100]]],
      [0, [[6, 1, 296_752]]],
    ];
    const expected: FtsStructure = {
      writeCounter: 123_456_789,
      levels: [
        { merging: 0, segments: [{ id: 3, pages: 1 }, { id: 4, pages: 2 }] },
        { merging: 2, segments: [{ id: 1, pages: 70 }, { id: 2, pages: 300 }] },
        { merging: 0, segments: [{ id: 5, pages: 100 }] },
        { merging: 0, segments: [{ id: 6, pages: 296_752 }] },
      ],
    };
    assert.deepEqual(decodeFtsStructure(record(levels, { writeCounter: 123_456_789 })), expected);
    assert.deepEqual(decodeFtsStructure(record(levels, { writeCounter: 123_456_789, v2: true })), expected);
    assert.equal(segmentCount(expected), 6);
  });

  it('a record cut short is an error, not a structure made up', () => {
    const whole = record([[0, [[1, 1, 200]]]]);
    assert.throws(() => decodeFtsStructure(whole.subarray(0, whole.length - 1)), /ends inside a number/);
  });
});

describe('the fold', () => {
  it('finds the level FTS5 merges next as fts5IndexMerge does', () => {
    assert.equal(nextMergeLevel(shape([[1, 1], [5, 5, 5], [9]]), 2), 1, 'the fullest level');
    assert.equal(nextMergeLevel(shape([[1, 1, 1], [5, 5, 5], [9]]), 2), 0, 'between equals, the lower');
    assert.equal(nextMergeLevel(shape([[1], [5, 5, 5], [9]], { 1: 3 }), 4), 1, 'a merge in progress with more inputs than any level below has segments, whatever the minimum');
    assert.equal(nextMergeLevel(shape([[1, 1, 1], [5, 5], [9]], { 1: 2 }), 2), 0, 'one with fewer: the fuller level below begins a merge');
    assert.equal(nextMergeLevel(shape([[1, 1, 1], [5, 5], [9]], { 1: 2 }), 4), -1, '…if it holds the minimum; if not, nothing');
    assert.equal(nextMergeLevel(shape([[1, 1, 1], [5, 5, 5, 5], [9]]), 4), 1);
    assert.equal(nextMergeLevel(shape([[1, 1, 1], [5, 5], [9]]), 4), -1, 'no level of the minimum');
    assert.equal(nextMergeLevel(shape([]), 2), -1);
  });

  it('agrees with FTS5 on a real table: the level it predicts is the level FTS5 merged', () => {
    const db = openSqlite(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t (t, rank) VALUES ('automerge', 0); INSERT INTO t (t, rank) VALUES ('crisismerge', 64)");
    const read = () => readFtsStructure(db, 't');
    let n = 0;
    const write = (k: number) => {
      for (let i = 0; i < k; i++, n++) db.prepare('INSERT INTO t (x) VALUES (?)').run(`w${n} ${'filler '.repeat(n % 50)}`);
    };
    let checked = 0;
    for (let round = 0; round < 40; round++) {
      write(1 + (round % 5));
      for (const nMin of [2, 4]) {
        const before = read();
        const predicted = nextMergeLevel(before, nMin);
        db.exec(`INSERT INTO t (t, rank) VALUES ('usermerge', ${nMin})`);
        db.exec("INSERT INTO t (t, rank) VALUES ('merge', 1)");
        const after = read();
        const changed = before.levels.findIndex((l, i) => JSON.stringify(l) !== JSON.stringify(after.levels[i]));
        if (predicted < 0) assert.deepEqual(after.levels, before.levels, `round ${round}, minimum ${nMin}: no merge predicted, none done`);
        else {
          assert.equal(changed, predicted, `round ${round}, minimum ${nMin}: ${JSON.stringify(before.levels)} → ${JSON.stringify(after.levels)}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= 20, `${checked} merges compared`);
  });

  it('may merge a level two or more below the largest segment\'s, and any level of usermerge segments', () => {
    // At 1M after a burst of creates: L2 [73, 74, 61] L3 [222, 419] L4 [5326] L5 [296752].
    const s = shape([[], [], [73, 74, 61], [222, 419], [5326], [296_752]]);
    assert.equal(largestLevel(s), 5);
    assert.equal(foldMayMerge(s, 2, 3, 4), true);
    assert.equal(foldMayMerge(s, 3, 2, 4), true);
    assert.equal(foldMayMerge(s, 4, 2, 4), false, 'its output would land beside the largest segment');
    assert.equal(foldMayMerge(s, 5, 2, 4), false, 'the largest segment itself: the whole index rewritten');
    assert.equal(foldMayMerge(s, 4, 4, 4), true, 'FTS5\'s usual rule still holds there');
    assert.equal(largestLevel(shape([[9], [3], [9]])), 2, 'between equals, the higher level');
  });

  it('a slice oversteps when it started a merge the fold may not, not when it went on with one or started an allowed one', () => {
    const before = shape([[1, 1], [40], [9000]]); // ids 1, 2 | 3 | 4
    // L0 merged into L1 (new segment 5), and then a merge of L1 begun: the level below the largest.
    const overstepped: FtsStructure = { writeCounter: 0, levels: [{ merging: 0, segments: [] }, { merging: 2, segments: [{ id: 3, pages: 40 }, { id: 5, pages: 1 }] }, { merging: 0, segments: [{ id: 4, pages: 9000 }, { id: 6, pages: 1 }] }] };
    assert.equal(foldOverstepped(before, overstepped, 4), true);
    const stopped: FtsStructure = { writeCounter: 0, levels: [{ merging: 0, segments: [] }, { merging: 0, segments: [{ id: 3, pages: 40 }, { id: 5, pages: 1 }] }, { merging: 0, segments: [{ id: 4, pages: 9000 }] }] };
    assert.equal(foldOverstepped(before, stopped, 4), false);
    const started: FtsStructure = { writeCounter: 0, levels: [{ merging: 2, segments: [{ id: 1, pages: 1 }, { id: 2, pages: 1 }] }, { merging: 0, segments: [{ id: 3, pages: 40 }, { id: 5, pages: 1 }] }, { merging: 0, segments: [{ id: 4, pages: 9000 }] }] };
    assert.equal(foldOverstepped(before, started, 4), false, 'a merge of L0, two below the largest');
    // A merge of the level below the largest that automerge had begun goes on: not the fold's.
    const inProgress = shape([[1], [40, 50, 60, 70, 80, 90, 100, 110], [9000]], { 1: 8 });
    assert.equal(foldOverstepped(inProgress, inProgress, 4), false);
  });

  it('a slice oversteps when a merge the fold may not began and ended within it', () => {
    // One statement with a minimum of 2 merged every level up into the largest's (a review found
    // this on the tests' own index): nothing is left in progress to tell.
    const before: FtsStructure = {
      writeCounter: 0,
      levels: [
        { merging: 0, segments: [{ id: 2, pages: 1 }, { id: 4, pages: 1 }] },
        { merging: 0, segments: [{ id: 5, pages: 2 }] },
        { merging: 0, segments: [{ id: 1, pages: 3 }] },
        { merging: 0, segments: [{ id: 3, pages: 5 }] },
        { merging: 0, segments: [{ id: 14, pages: 182 }] },
      ],
    };
    const after: FtsStructure = { writeCounter: 0, levels: [0, 1, 2, 3].map(() => ({ merging: 0, segments: [] as FtsSegment[] })).concat([{ merging: 0, segments: [{ id: 14, pages: 182 }, { id: 1, pages: 9 }] }]) };
    assert.equal(foldOverstepped(before, after, 4), true);
    // The level below the largest merged by FTS5's usual rule (four segments): not the fold's doing.
    const four = shape([[], [], [], [5, 6, 7, 8], [182]]);
    const merged: FtsStructure = { writeCounter: 0, levels: [0, 1, 2, 3].map(() => ({ merging: 0, segments: [] as FtsSegment[] })).concat([{ merging: 0, segments: [{ id: 5, pages: 182 }, { id: 9, pages: 26 }] }]) };
    assert.equal(foldOverstepped(four, merged, 4), false);
    // A segment FTS5 promoted to another level is the same segment.
    const promoted = shape([[1, 1], [], [30], [182]]);
    const moved: FtsStructure = { writeCounter: 0, levels: [{ merging: 0, segments: [] }, { merging: 0, segments: [{ id: 6, pages: 2 }] }, { merging: 0, segments: [{ id: 3, pages: 30 }] }, { merging: 0, segments: [{ id: 4, pages: 182 }] }] };
    assert.equal(foldOverstepped(promoted, moved, 4), false);
    const elsewhere: FtsStructure = { writeCounter: 0, levels: [{ merging: 0, segments: [] }, { merging: 0, segments: [{ id: 6, pages: 2 }, { id: 3, pages: 30 }] }, { merging: 0, segments: [] }, { merging: 0, segments: [{ id: 4, pages: 182 }] }] };
    assert.equal(foldOverstepped(promoted, elsewhere, 4), false);
  });
});
