// The search index's segments, read from FTS5's structure record, and the rule by which the idle
// merger folds the small ones together (RecordingStore.mergeSlice, src/services/index-merger.ts).
//
// Why fold: an edit or delete looks each old word up in every segment (secure-delete), and a search
// each of its words, at ~30 µs a seek whatever the segment's size (bench/fts-cost.ts). FTS5's own
// merging, inside writes (automerge 8) and at rest (usermerge 4), merges a level only once it holds
// that many segments, so a library at rest keeps up to 3 on every level below the largest segment:
// at 1M recordings a burst of creates left `L2 [73, 74, 61] L3 [222, 419] L4 [5326] L5 [296752]`,
// and the edits after it took 94.5 ms p99 against 38.8 on 3 segments in the run before (the VM's
// slow hour was part of that: bench/results-notes.md, the thirty-first run). Merging every pair
// (usermerge 2) is not the answer either: FTS5 puts a merge's output on the next level up, so the
// pairs climb into the largest segment's level and the next merge there rewrites the whole index
// (~600 MB at 1M) for a few pages of new text. The fold merges any level of two or more segments,
// except the level of the largest segment and the level just below it (its output would land
// beside the largest segment): those keep FTS5's usual rule. The small segments a burst left so end
// up as one on the level below the largest, beside at most 3 others there. One case it cannot
// reach: FTS5 merges the level with the most segments first, so while the level below the largest
// (or the largest's own) holds more than any further down, levels of 2 further down stay until a
// burst of writes adds to them or usermerge 4 merges that level. Over hundreds of small bursts with
// quiet spells between, it kept 10-20% fewer segments at rest than usermerge 4 alone, for 2-3
// times the merge slices (README, Index merging).
import type Database from 'better-sqlite3';

export interface FtsSegment {
  id: number;
  /** Leaf pages. */
  pages: number;
}

export interface FtsLevel {
  /** The first `merging` segments are the input of a merge in progress (its output is the last segment of the next level). */
  merging: number;
  segments: FtsSegment[];
}

export interface FtsStructure {
  /** Leaf pages written since the index began (FTS5's automerge works each time it crosses a multiple of 64). */
  writeCounter: number;
  levels: FtsLevel[];
}

/** FTS5_STRUCTURE_V2 ("\xFF\x00\x00\x01"): the marker after the cookie of a record with per-segment origins and tombstones (contentless_delete). */
const V2_MARKER = 0xff000001;

/**
 * Decodes a structure record (the block of %_data id 10; its layout is described at the top of
 * SQLite's fts5_index.c): a 4-byte cookie, in a V2 record a 4-byte marker, then SQLite varints
 * nLevel, nSegment, nWriteCounter and per level nMerge, nSeg and per segment its id, first and last
 * leaf page (and in V2 five more varints).
 */
export function decodeFtsStructure(block: Uint8Array): FtsStructure {
  let at = 4;
  const v2 = block.length >= 8 && new DataView(block.buffer, block.byteOffset, block.byteLength).getUint32(4) === V2_MARKER;
  if (v2) at += 4;
  const varint = (): number => {
    let v = 0;
    for (let i = 0; i < 9; i++) {
      if (at >= block.length) throw new Error('FTS5 structure record ends inside a number');
      const b = block[at++]!;
      if (i === 8) return v * 256 + b;
      v = v * 128 + (b & 0x7f);
      if (!(b & 0x80)) return v;
    }
    return v;
  };
  const nLevel = varint();
  varint(); // nSegment: the sum of the levels' counts
  const writeCounter = varint();
  const levels: FtsLevel[] = [];
  for (let l = 0; l < nLevel; l++) {
    const merging = varint();
    const n = varint();
    const segments: FtsSegment[] = [];
    for (let s = 0; s < n; s++) {
      const id = varint();
      const first = varint();
      const last = varint();
      if (v2) for (let k = 0; k < 5; k++) varint(); // origins, tombstone pages and entries, entries
      segments.push({ id, pages: last - first + 1 });
    }
    levels.push({ merging, segments });
  }
  return { writeCounter, levels };
}

/** The query for the structure record's block of FTS5 table `table` (none before its first write). */
const structureSql = (table: string): string => `SELECT block FROM ${table}_data WHERE id = 10`;

/** The structure record's block of the search index. */
export const FTS_STRUCTURE_SQL = structureSql('recordings_fts');

/** The structure of a record read with FTS_STRUCTURE_SQL: no levels where there is none. */
export const structureOf = (block: Uint8Array | undefined): FtsStructure => (block ? decodeFtsStructure(block) : { writeCounter: 0, levels: [] });

/** The structure of FTS5 table `table` (the search index unless named), on a connection without a RecordingStore (the bench, tests). */
export const readFtsStructure = (db: Database.Database, table = 'recordings_fts'): FtsStructure =>
  structureOf(db.prepare(structureSql(table)).pluck().get() as Buffer | undefined);

export const segmentCount = (s: FtsStructure): number => s.levels.reduce((n, l) => n + l.segments.length, 0);

/** The level of the largest segment (the highest, between equals); -1 in an empty index. */
export function largestLevel(s: FtsStructure): number {
  let level = -1;
  let pages = 0;
  s.levels.forEach((l, i) => {
    for (const seg of l.segments) {
      if (seg.pages >= pages) {
        pages = seg.pages;
        level = i;
      }
    }
  });
  return level;
}

/**
 * Whether the fold may start a merge of `level`'s segments (`inputs` of them): a level at least two
 * below the largest segment's, or any level of `usermerge` or more segments (FTS5's usual rule,
 * which the fold keeps).
 */
export function foldMayMerge(s: FtsStructure, level: number, inputs: number, usermerge: number): boolean {
  return inputs >= usermerge || level < largestLevel(s) - 1;
}

/**
 * The level FTS5's 'merge' works on next with a minimum of `nMin` segments, as fts5IndexMerge
 * chooses it: going up, the level with the most segments so far (the lowest between equals),
 * until the first level with a merge in progress, which wins if its merge has more input segments
 * than that (whatever the minimum); otherwise the fullest level if it holds at least nMin. -1 for
 * none (FTS5 then looks for a level to merge for its deletes, which only contentless_delete tables
 * have).
 */
export function nextMergeLevel(s: FtsStructure, nMin: number): number {
  let best = -1;
  let most = 0;
  for (let i = 0; i < s.levels.length; i++) {
    const l = s.levels[i]!;
    if (l.merging > 0) {
      if (l.merging > most) return i;
      break;
    }
    if (l.segments.length > most) {
      most = l.segments.length;
      best = i;
    }
  }
  return most >= nMin ? best : -1;
}

/** A segment as the checks below tell it apart: FTS5 reuses the ids of merged segments. */
const key = (x: FtsSegment): string => `${x.id}:${x.pages}`;

/** A merge in progress on `level`, by its level and its input segments (an input keeps its id while it is consumed); undefined for none. */
const mergeOn = (l: FtsLevel, level: number): string | undefined => (l.merging > 0 ? `${level}:${l.segments.slice(0, l.merging).map((x) => x.id).join(',')}` : undefined);

/**
 * Whether a slice that took the index from `before` to `after` did a merge the fold may not
 * (foldMayMerge, judged on `before`). A merge may begin and end within one slice, so this looks
 * at what it leaves, not only at the merges left in progress:
 * - a segment on the level below the largest segment's, on the largest's or above is gone or
 *   changed, where its level held fewer than usermerge segments and no merge in progress (and the
 *   segment was not the growing output of a merge in progress below it). Segments moved between
 *   levels by FTS5's promotions are the same segments, and are not counted;
 * - a new segment on the largest segment's level or above, unless the level below it held
 *   usermerge segments or a merge in progress (FTS5's usual rule put it there);
 * - a merge begun on a level the fold may not merge.
 */
export function foldOverstepped(before: FtsStructure, after: FtsStructure, usermerge: number): boolean {
  const top = largestLevel(before);
  if (top < 0) return false;
  const kept = new Set(after.levels.flatMap((l) => l.segments.map(key)));
  const had = new Set(before.levels.flatMap((l) => l.segments.map(key)));
  const usual = (level: number) => {
    const l = before.levels[level];
    return l !== undefined && (l.merging > 0 || l.segments.length >= usermerge);
  };
  for (let level = Math.max(0, top - 1); level < before.levels.length; level++) {
    const l = before.levels[level]!;
    if (usual(level)) continue;
    const output = before.levels[level - 1]?.merging ? l.segments.at(-1) : undefined;
    if (l.segments.some((x) => x !== output && !kept.has(key(x)))) return true;
  }
  if (!usual(top - 1)) {
    for (let level = top; level < after.levels.length; level++) {
      if (after.levels[level]!.segments.some((x) => !had.has(key(x)))) return true;
    }
  }
  const earlier = new Set(before.levels.map(mergeOn));
  return after.levels.some((l, level) => {
    const merge = mergeOn(l, level);
    return merge !== undefined && !earlier.has(merge) && !foldMayMerge(before, level, l.merging, usermerge);
  });
}
