// The FTS5 index's segments, read from its structure record: how many there are matters to an
// edit or delete, which looks each term of the old text up in every one of them (see fts-cost.ts).
import type Database from 'better-sqlite3';

export interface FtsStructure {
  segments: number;
  /** Leaf pages written since the index began: FTS5's automerge does merge work each time it crosses a multiple of 64. */
  writeCounter: number;
  /** Per level: the input segments of a merge in progress, and each segment's leaf pages. */
  levels: Array<{ merging: number; pages: number[] }>;
}

/**
 * Segments per level, in leaf pages, from the FTS5 structure record (%_data id 10; its layout is
 * described at the top of SQLite's fts5_index.c): a 4-byte cookie, then varints nLevel, nSegment,
 * nWriteCounter, and per level nMerge, nSeg and per segment (id, first page, last page).
 */
export function ftsStructure(db: Database.Database): FtsStructure {
  const block = (db.prepare('SELECT block FROM recordings_fts_data WHERE id = 10').get() as { block: Buffer }).block;
  let at = 4;
  const varint = (): number => {
    let v = 0;
    for (let i = 0; i < 9; i++) {
      const b = block[at++]!;
      if (i === 8) return v * 256 + b;
      v = v * 128 + (b & 0x7f);
      if (!(b & 0x80)) return v;
    }
    return v;
  };
  if (block.readUInt32BE(4) === 0xffffffff) throw new Error('structure record v2 (contentless_delete): not read here');
  const nLevel = varint();
  const segments = varint();
  const writeCounter = varint();
  const levels = [];
  for (let l = 0; l < nLevel; l++) {
    const merging = varint();
    const n = varint();
    const pages: number[] = [];
    for (let s = 0; s < n; s++) {
      varint(); // segment id
      const first = varint();
      pages.push(varint() - first + 1);
    }
    levels.push({ merging, pages });
  }
  return { segments, writeCounter, levels };
}

/** "N segments; leaf pages per level: L0 [..] L1 (merging k) [..]". */
export const describeStructure = (s: FtsStructure): string =>
  `${s.segments} segments; leaf pages per level: ${s.levels.map((l, i) => `L${i}${l.merging ? ` (merging ${l.merging})` : ''} [${l.pages.join(', ')}]`).join(' ')}`;
