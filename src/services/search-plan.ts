// The conditions of q (CONTRACT §5 "q"), each in three forms: the FTS5 expression that is exactly
// the condition, the cheap expressions a search may walk to find its candidates, and a test of a
// row's text. recording-search.ts walks one cheap expression in rowid order and tests every
// candidate it reads against all the other conditions, so each step of the walk ends after one
// candidate and the work of a page can be bounded (SEARCH_BUDGET).
//
// Why not let FTS5 evaluate the whole expression: it does not stop until it finds a match or runs
// out of index. A phrase of common words ("the of and to a") checks positions in nearly every
// recording before its first hit, a prefix without a prefix index ("inte"*) merges the doclists of
// all its words before the first row, and a rowid range does not help (FTS5 applies the upper
// bound only once it has a match; measured at 100,000 recordings: 200 ms for the phrase over
// 1/1000 of the library, the same as over all of it).
import type { RecordingRow } from './recording-model';
import { textWords, withoutDiacritics, type SearchTerms } from './search-terms';

/** Length of the FTS5 prefix index in schema.sql (prefix = '3'). */
export const PREFIX_INDEX_CHARS = 3;
/** Up to this many whole-word expansions are ORed; a wider prefix walks its prefix-index head. */
const MAX_EXPANSIONS = 48;
const ASCII_WORD = /^[a-z0-9]+$/;

export const quote = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** An expression a search may walk: read lazily in rowid order, one index entry per step. */
export interface Driver {
  expr: string;
  /** It returns exactly the recordings that meet its condition (false: a superset, tested in JS). */
  exact: boolean;
}

export interface Condition {
  /** The FTS5 expression that is exactly this condition. */
  whole: string;
  /** Cheap expressions that find every recording meeting it; empty: only `whole` (merged first). */
  drivers: Driver[];
  /** Whether a row meets the condition, from its title and transcript. */
  test: (row: Pick<RecordingRow, 'title' | 'transcript'>) => boolean;
}

type Terms = Pick<SearchTerms, 'expansions' | 'continuations'>;

/** q → its words and quoted phrases. An unmatched quote opens a phrase that runs to the end. */
export function parseQuery(q: string): Array<{ phrase: boolean; words: string[] }> {
  const parts = q.split('"');
  const out: Array<{ phrase: boolean; words: string[] }> = [];
  parts.forEach((part, i) => {
    const words = textWords(part);
    if (words.length === 0) return;
    if (i % 2 === 1) out.push({ phrase: true, words });
    else for (const w of words) out.push({ phrase: false, words: [w] });
  });
  return out;
}

type Item = { phrase: true; words: string[] } | { phrase: false; word: string; folded: string; exact: boolean };

/**
 * The words and phrases of q: each word in the form the index is searched with, one-character
 * words exact, repeats and prefix words implied by a longer word of q left out.
 */
function items(q: string): Item[] {
  const all: Item[] = parseQuery(q).map((item) => {
    if (item.phrase) return { phrase: true, words: item.words };
    // "Café" and "cafe" are the same word to FTS5 (remove_diacritics 2), so a word that is ASCII
    // without its diacritics takes the ASCII path and its lazy expansion.
    const original = item.words[0]!;
    const folded = withoutDiacritics(original);
    const word = ASCII_WORD.test(folded) ? folded : original;
    // One character as a prefix would match nearly every word of its script (an FTS5 prefix query
    // with no prefix index merges the doclists of all of them): only the word itself.
    return { phrase: false, word, folded, exact: [...word].length === 1 };
  });
  const prefixes = all.filter((i): i is Extract<Item, { phrase: false }> => !i.phrase && !i.exact);
  return all.filter((i) => i.phrase || i.exact || !prefixes.some((longer) => longer.folded.length > i.folded.length && longer.folded.startsWith(i.folded)));
}

/**
 * The conditions of q, without repeats: [] when q has no words (no text condition), null when some
 * word cannot match anything (the page is empty without asking FTS5).
 */
export function searchConditions(q: string, terms: Terms): Condition[] | null {
  const out = new Map<string, Condition>();
  for (const item of items(q)) {
    const condition = item.phrase ? phrase(item.words) : item.exact ? exactWord(item.word) : prefixWord(item.word, terms);
    if (condition === null) return null;
    // The same condition twice is one condition (AND is idempotent).
    if (!out.has(condition.whole)) out.set(condition.whole, condition);
  }
  return [...out.values()];
}

/** The FTS5 expression for q: '' when q has no words, null when some word cannot match anything. */
export function matchExpression(q: string, terms: Terms): string | null {
  const conditions = searchConditions(q, terms);
  return conditions && conditions.map((c) => c.whole).join(' AND ');
}

function exactWord(word: string): Condition {
  return { whole: quote(word), drivers: [{ expr: quote(word), exact: true }], test: textTest([withoutDiacritics(word)], false) };
}

/** A phrase is walked by one of its words; the others and their order are tested on the text. */
function phrase(words: string[]): Condition {
  if (words.length === 1) return exactWord(words[0]!);
  const distinct = [...new Set(words)];
  return {
    whole: quote(words.join(' ')),
    drivers: distinct.map((w) => ({ expr: quote(w), exact: false })),
    test: textTest(words.map(withoutDiacritics), false),
  };
}

/**
 * A word matches any indexed word it starts. An ASCII word is walked as an OR of the whole words it
 * starts, or, for a shorter word with too many of those, of its three-character continuations
 * (each served by the prefix index), or, for a longer word with too many, as its first three
 * characters (the prefix index; the rest is tested on the text). Other words: FTS5's prefix query,
 * lazy only at exactly three characters.
 */
function prefixWord(word: string, terms: Terms): Condition | null {
  const test = textTest([withoutDiacritics(word)], true);
  const plain = (lazy: boolean): Condition => ({ whole: `${quote(word)}*`, drivers: lazy ? [{ expr: `${quote(word)}*`, exact: true }] : [], test });
  if (!ASCII_WORD.test(word) || word.length === PREFIX_INDEX_CHARS) return plain([...word].length === PREFIX_INDEX_CHARS);
  const forms = terms.expansions(word, MAX_EXPANSIONS + 1);
  if (forms.length === 0) return null;
  if (forms.length <= MAX_EXPANSIONS) {
    const expr = `(${forms.map(quote).join(' OR ')})`;
    return { whole: expr, drivers: [{ expr, exact: true }], test };
  }
  if (word.length < PREFIX_INDEX_CHARS) {
    const heads = terms.continuations(word, PREFIX_INDEX_CHARS, MAX_EXPANSIONS);
    if (heads.length <= MAX_EXPANSIONS) {
      const expr = `(${heads.map((h) => ([...h].length < PREFIX_INDEX_CHARS ? quote(h) : `${quote(h)}*`)).join(' OR ')})`;
      return { whole: expr, drivers: [{ expr, exact: true }], test };
    }
    return plain(false);
  }
  return { whole: `${quote(word)}*`, drivers: [{ expr: `${quote(word.slice(0, PREFIX_INDEX_CHARS))}*`, exact: false }], test };
}

// The search's idea of a word, as in search-terms.ts: runs of letters, numbers, marks and
// private-use characters, compared lower-cased and without diacritics.
const NOT_WORD = '[^\\p{L}\\p{N}\\p{M}\\p{Co}]';
const WORD_CHAR = '[\\p{L}\\p{N}\\p{M}\\p{Co}]';
const escapeRegExp = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** Text folded the way the index folds it: lower case, diacritics removed. */
const folded = (text: string): string => withoutDiacritics(text.toLowerCase());

/**
 * A test for consecutive words (folded) in the title or in the transcript (a phrase never spans
 * the two): the first starts a word, the last starts (prefix) or is (exact) a word.
 */
function textTest(words: string[], prefix: boolean): Condition['test'] {
  const body = words.map(escapeRegExp).join(`${NOT_WORD}+`);
  const re = new RegExp(`(?<!${WORD_CHAR})${body}${prefix ? '' : `(?!${WORD_CHAR})`}`, 'u');
  return (row) => re.test(folded(row.title)) || re.test(folded(row.transcript));
}
