// What an edit changes in the FTS index, when both texts' tokens are known exactly: only the words
// that differ. The index keeps no positions and no sizes (detail = none, columnsize = 0), so what it
// holds of a recording is the set of its words; the old text's 'delete' and the new text's insert
// of an ordinary update (the trigger of schema.sql) can be cut down to the words that left and the
// words that came. With secure-delete every deleted word costs a seek in every index segment and a
// rewrite of the leaf that held the recording, so the words both texts share were most of an edit's
// cost, and the most expensive part of it (the common words, with the longest doclists): a fixed
// typo now deletes one word instead of all of them.
//
// FTS5 also keeps, per column, the total number of tokens ever indexed (its 'averages' record, for
// bm25; FTS5's integrity-check compares it with the table). The delete and the insert below change
// those totals by exactly what the full update would: a removed word may be listed several times in
// the delete and an added one in the insert (repeats of a word in one document are one entry of the
// index), and when neither list has a word to repeat, one shared word is deleted and inserted again
// (as the full update does with every word) to carry the difference.

/** Tokens of a recording's indexed columns, as FTS5's tokenizer makes them. */
export interface IndexedText {
  title: string[];
  transcript: string[];
}

/** The texts of one FTS5 'delete' and one insert of the same rowid, column by column. */
export interface IndexChange {
  remove: { title: string; transcript: string };
  add: { title: string; transcript: string };
}

const COLUMNS = ['title', 'transcript'] as const;

/**
 * The delete and insert that take the index from `before`'s words to `after`'s, or null when no
 * such pair exists without more words than the full update (neither text has a word: nothing to
 * carry a change in token counts; the caller then updates the whole row).
 */
export function indexChange(before: IndexedText, after: IndexedText): IndexChange | null {
  const oldWords = new Set([...before.title, ...before.transcript]);
  const newWords = new Set([...after.title, ...after.transcript]);
  const removed = [...oldWords].filter((w) => !newWords.has(w));
  const added = [...newWords].filter((w) => !oldWords.has(w));
  const shared = removed.length > 0 && added.length > 0 ? undefined : [...oldWords].find((w) => newWords.has(w));
  const del: Record<(typeof COLUMNS)[number], string[]> = { title: [], transcript: removed };
  const ins: Record<(typeof COLUMNS)[number], string[]> = { title: [], transcript: added };
  for (const column of COLUMNS) {
    // Tokens the insert must add to this column's total beyond what the delete takes off it.
    let extra = after[column].length - before[column].length - (ins[column].length - del[column].length);
    if (extra > 0) {
      if (added.length > 0) ins[column] = [...ins[column], ...repeat(added[0]!, extra)];
      else if (shared !== undefined) {
        del[column] = [...del[column], shared];
        ins[column] = [...ins[column], ...repeat(shared, extra + 1)];
      } else return null;
    } else if (extra < 0) {
      extra = -extra;
      if (removed.length > 0) del[column] = [...del[column], ...repeat(removed[0]!, extra)];
      else if (shared !== undefined) {
        ins[column] = [...ins[column], shared];
        del[column] = [...del[column], ...repeat(shared, extra + 1)];
      } else return null;
    }
  }
  return {
    remove: { title: del.title.join(' '), transcript: del.transcript.join(' ') },
    add: { title: ins.title.join(' '), transcript: ins.transcript.join(' ') },
  };
}

const repeat = (word: string, n: number): string[] => Array.from({ length: n }, () => word);
