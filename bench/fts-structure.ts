// The FTS5 index's segments as the bench reports them: how many there are matters to an edit or
// delete, which looks each term of the old text up in every one of them (see fts-cost.ts). The
// record is read by the server's own decoder (src/store/fts-structure.ts).
import type Database from 'better-sqlite3';
import { readFtsStructure, segmentCount } from '../src/store/fts-structure';

export interface FtsStructure {
  segments: number;
  /** Leaf pages written since the index began: FTS5's automerge does merge work each time it crosses a multiple of 64. */
  writeCounter: number;
  /** Per level: the input segments of a merge in progress, and each segment's leaf pages. */
  levels: Array<{ merging: number; pages: number[] }>;
}

export function ftsStructure(db: Database.Database): FtsStructure {
  const s = readFtsStructure(db);
  return { segments: segmentCount(s), writeCounter: s.writeCounter, levels: s.levels.map((l) => ({ merging: l.merging, pages: l.segments.map((x) => x.pages) })) };
}

/** "N segments; leaf pages per level: L0 [..] L1 (merging k) [..]". */
export const describeStructure = (s: FtsStructure): string =>
  `${s.segments} segments; leaf pages per level: ${s.levels.map((l, i) => `L${i}${l.merging ? ` (merging ${l.merging})` : ''} [${l.pages.join(', ')}]`).join(' ')}`;
