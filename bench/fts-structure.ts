// The FTS5 index's segments as the bench prints them: how many there are matters to an edit or
// delete, which looks each term of the old text up in every one of them (see fts-cost.ts). The
// record is read by the server's own decoder (src/store/fts-structure.ts: readFtsStructure).
import { segmentCount, type FtsStructure } from '../src/store/fts-structure';

/** "N segments; leaf pages per level: L0 [..] L1 (merging k) [..]". */
export const describeStructure = (s: FtsStructure): string =>
  `${segmentCount(s)} segments; leaf pages per level: ${s.levels.map((l, i) => `L${i}${l.merging ? ` (merging ${l.merging})` : ''} [${l.segments.map((x) => x.pages).join(', ')}]`).join(' ')}`;
