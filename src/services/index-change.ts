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
 * The delete and insert that take the index from `before`'s words to `after`'s, or null in the rare
 * case where no shared word can carry a change in token counts (the caller then updates the whole
 * row). FTS5 refuses a delete that would take a column's total below zero, so no column's delete
 * takes off more tokens than the old text had there: each word that left is listed once, in a
 * column where the old text had it, and repeats only make up what the new text has fewer of.
 */
export function indexChange(before: IndexedText, after: IndexedText): IndexChange | null {
  const oldWords = new Set([...before.title, ...before.transcript]);
  const newWords = new Set([...after.title, ...after.transcript]);
  const del = placed(before, newWords);
  const ins = placed(after, oldWords);
  const anyRemoved = del.title[0] ?? del.transcript[0];
  const anyAdded = ins.title[0] ?? ins.transcript[0];
  for (const column of COLUMNS) {
    // Tokens the insert must add to this column's total beyond what the delete takes off it.
    const extra = after[column].length - before[column].length - (ins[column].length - del[column].length);
    if (extra > 0) {
      if (anyAdded !== undefined) ins[column].push(...repeat(anyAdded, extra));
      else {
        // Deleted once and inserted again: a word the old text had in this column (so this
        // column's delete stays within the old text's tokens).
        const shared = before[column].find((w) => newWords.has(w));
        if (shared === undefined) return null;
        del[column].push(shared);
        ins[column].push(...repeat(shared, extra + 1));
      }
    } else if (extra < 0) {
      if (anyRemoved !== undefined) del[column].push(...repeat(anyRemoved, -extra));
      else {
        // A word the new text has in this column, so the delete's count stays within the old text's.
        const shared = after[column].find((w) => oldWords.has(w));
        if (shared === undefined) return null;
        ins[column].push(shared);
        del[column].push(...repeat(shared, 1 - extra));
      }
    }
  }
  return {
    remove: { title: del.title.join(' '), transcript: del.transcript.join(' ') },
    add: { title: ins.title.join(' '), transcript: ins.transcript.join(' ') },
  };
}

/** The words of `text` that `other` lacks, each once, in the first column that has it. */
function placed(text: IndexedText, other: Set<string>): Record<(typeof COLUMNS)[number], string[]> {
  const seen = new Set<string>();
  const out = { title: [] as string[], transcript: [] as string[] };
  for (const column of COLUMNS) {
    for (const w of text[column]) {
      if (other.has(w) || seen.has(w)) continue;
      seen.add(w);
      out[column].push(w);
    }
  }
  return out;
}

const repeat = (word: string, n: number): string[] => Array.from({ length: n }, () => word);
