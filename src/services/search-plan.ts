// The conditions of q (docs/decisions.md §5 "q"), each in four forms: the FTS5 expression that would be
// exactly the condition over an index with positions (reported, not run), a cheap expression that
// FTS5 reads lazily in rowid order and that finds every recording meeting it (the condition
// itself, or a superset), one FTS5 may have to merge doclists for (when there is no cheap one),
// and a test of a row's text. The index keeps no positions (schema.sql, detail = none): no
// expression sent to FTS5 holds a phrase, not even a word its tokenizer splits (lookup()).
// recording-search.ts lets FTS5 walk the AND of the cheap expressions and tests each candidate
// for the conditions whose cheap expression is only a superset, so that each step of the walk ends
// after about one candidate and the work of a page can be bounded (SEARCH_BUDGET).
//
// Why not let FTS5 evaluate the whole expression: it does not stop until it finds a match or runs
// out of index. A phrase of common words ("the of and to a") checks positions in nearly every
// recording before its first hit, a prefix query ("inte"*) merges the doclists of all its words
// before the first row (the index has no prefix index: schema 5), and a rowid range does not help
// (FTS5 applies the upper bound only once it has a match; measured at 100,000 recordings: 200 ms
// for the phrase over 1/1000 of the library, the same as over all of it). So a phrase is walked as
// the AND of its words (order tested on the text), a prefix as the OR of the few whole words it
// starts, and a prefix with too many of those is tested on the text of the rows read.
import { ftsQuote } from '../store/fts-quote';
import type { RecordingRow } from './recording-model';
import { textWords, withoutDiacritics, WORD_CLASS, wordAt, wordBefore, type SearchTerms } from './search-terms';

/**
 * Up to this many whole-word expansions are ORed; a wider prefix is tested on the text of the rows
 * the other conditions walk, or of the account's recordings read in order. Such a prefix is almost
 * always common ("int", "co", "pro"), so a page fills after a few hundred rows; a rare one gives
 * short pages with a cursor, within the same work bound.
 */
const MAX_EXPANSIONS = 48;
const ASCII_WORD = /^[a-z0-9]+$/;


export interface Condition {
  /**
   * The condition as one FTS5 expression over positions (a phrase is a quoted string): what
   * matchExpression() reports. It is not run: the index keeps no positions (detail=none), so the
   * search asks FTS5 for `walk` or `eager` and tests phrases on the text.
   */
  whole: string;
  /**
   * An expression FTS5 reads lazily in rowid order that returns every recording meeting the
   * condition, or null when there is none.
   */
  walk: string | null;
  /**
   * An expression FTS5 can answer that returns every recording meeting the condition, possibly only
   * after merging doclists (a prefix of 4+ characters of a non-ASCII word); null when FTS5 cannot
   * be asked at all (then the recordings are read in order and tested).
   */
  eager: string | null;
  /** `walk` and `eager` return exactly the recordings meeting it (false: a superset, tested with `test`). */
  exact: boolean;
  /** Whether a row meets the condition, from its title and transcript. */
  test: (row: Pick<RecordingRow, 'title' | 'transcript'>) => boolean;
  /**
   * Whether `walk` would return a row, where that differs from `test` (a phrase's words in any
   * order): how dense FTS5's candidates are (recording-search.ts, past a cursor). Absent: `test`.
   */
  walkTest?: (row: Pick<RecordingRow, 'title' | 'transcript'>) => boolean;
}

/** The vocabulary of the index; `tokens` absent: every word is one FTS5 token (as an ASCII word is). */
type Terms = Pick<SearchTerms, 'expansions'> & Partial<Pick<SearchTerms, 'tokens'>>;

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
    // merges the doclists of all of them): only the word itself.
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
    // A word of marks only ("ि") is nothing once folded: neither the index nor the text test has it.
    if (item.phrase) item.words = item.words.filter((w) => withoutDiacritics(w) !== '');
    if (item.phrase ? item.words.length === 0 : item.folded === '') return null;
    const condition = item.phrase ? phrase(item.words, terms) : item.exact ? exactWord(item.word, terms) : prefixWord(item.word, terms);
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

/** What FTS5 can be asked for one word: see Condition. */
type Lookup = Pick<Condition, 'walk' | 'eager' | 'exact'>;

const NO_LOOKUP: Lookup = { walk: null, eager: null, exact: false };

/**
 * How FTS5 finds the recordings with a word (prefix: a word starting with it). A word FTS5 reads as
 * one token is asked for as it is. A word it splits (its tokenizer drops a character the search
 * counts as part of a word) is asked for as the AND of its tokens, each whole except a last one
 * that ends the word of a prefix: a superset, whose rows are tested on the text.
 */
function lookup(word: string, prefix: boolean, terms: Terms): Lookup {
  const tokens = terms.tokens ? terms.tokens(word) : [word];
  if (tokens.length === 1 && tokens[0] === word) {
    if (!prefix) return { walk: ftsQuote(word), eager: ftsQuote(word), exact: true };
    // FTS5 merges the doclists of every word starting so before its first row: never walked.
    return { walk: null, eager: `${ftsQuote(word)}*`, exact: true };
  }
  if (tokens.length === 0) return NO_LOOKUP;
  const last = tokens.length - 1;
  const open = prefix && word.endsWith(tokens[last]!);
  const parts = tokens.map((t, i) => (i === last && open ? `${ftsQuote(t)}*` : ftsQuote(t)));
  // A prefix query merges doclists first: leave it out of the lazy walk.
  const lazy = parts.filter((_, i) => !(i === last && open));
  const and = (xs: string[]) => (xs.length === 0 ? null : xs.length === 1 ? xs[0]! : `(${xs.join(' AND ')})`);
  return { walk: and(lazy), eager: and(parts), exact: false };
}

/** All of the lookups (a phrase's words): each one's expression, or nothing for a word FTS5 cannot find. */
function allOf(lookups: Lookup[]): Lookup {
  const and = (xs: Array<string | null>) => {
    const known = [...new Set(xs.filter((x): x is string => x !== null))];
    return known.length === 0 ? null : known.join(' AND ');
  };
  return { walk: and(lookups.map((l) => l.walk)), eager: and(lookups.map((l) => l.eager)), exact: false };
}

/** Any of the lookups (the forms of a prefix): only when FTS5 can be asked for every one. */
function anyOf(lookups: Lookup[]): Lookup {
  const or = (xs: Array<string | null>) => (xs.some((x) => x === null) ? null : `(${xs.join(' OR ')})`);
  return { walk: or(lookups.map((l) => l.walk)), eager: or(lookups.map((l) => l.eager)), exact: lookups.every((l) => l.exact) };
}

function exactWord(word: string, terms: Terms): Condition {
  return { whole: ftsQuote(word), ...lookup(word, false, terms), test: textTest([withoutDiacritics(word)], false) };
}

/** A phrase is walked as the AND of its words; their order is tested on the text. */
function phrase(words: string[], terms: Terms): Condition {
  if (words.length === 1) return exactWord(words[0]!, terms);
  return {
    whole: ftsQuote(words.join(' ')),
    ...allOf([...new Set(words)].map((w) => lookup(w, false, terms))),
    test: textTest(words.map(withoutDiacritics), false),
    walkTest: allTests([...new Set(words)].map((w) => textTest([withoutDiacritics(w)], false))),
  };
}

/**
 * A word matches any indexed word it starts. An ASCII word is walked as an OR of the whole words it
 * starts; with more than MAX_EXPANSIONS of them it is only tested on the text (see there). Other
 * words: FTS5's prefix query, which merges doclists first, so it is asked only when no other
 * condition can be walked (search-terms.ts stores only forms that start with an ASCII character).
 */
function prefixWord(word: string, terms: Terms): Condition | null {
  const test = textTest([withoutDiacritics(word)], true);
  const whole = `${ftsQuote(word)}*`;
  if (!ASCII_WORD.test(word)) return { whole, ...lookup(word, true, terms), test };
  const forms = terms.expansions(word, MAX_EXPANSIONS + 1);
  if (forms.length === 0) return null;
  if (forms.length > MAX_EXPANSIONS) return { whole, walk: null, eager: null, exact: false, test };
  const any = anyOf(forms.map((f) => lookup(f, false, terms)));
  // A form FTS5 has no token of cannot be walked, nor can the OR: then the text is tested.
  return { whole: `(${forms.map(ftsQuote).join(' OR ')})`, ...any, test };
}

const allTests =
  (tests: Array<Condition['test']>): Condition['test'] =>
  (row) =>
    tests.every((t) => t(row));

// The search's idea of a word, as in search-terms.ts: runs of letters, numbers, marks and
// private-use characters, compared lower-cased and without diacritics.
const NOT_WORD = `[^${WORD_CLASS}]`;
const escapeRegExp = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

const NON_ASCII = /[^\x00-\x7f]/gu;
const foldedChars = new Map<string, string>();
/** One code point without diacritics (remembered: a text has few distinct non-ASCII characters). */
function foldedChar(ch: string): string {
  let out = foldedChars.get(ch);
  if (out === undefined) {
    if (foldedChars.size > 10_000) foldedChars.clear();
    out = withoutDiacritics(ch);
    foldedChars.set(ch, out);
  }
  return out;
}

/**
 * Characters the text tests fold and split into words exactly as FTS5's tokenizer does (unicode61,
 * remove_diacritics 2): ASCII, the Latin letters and accents, punctuation, symbols and drawings
 * below, each checked against FTS5 (test/services/search-fold.test.ts). Elsewhere the two differ:
 * FTS5 keeps Cyrillic ё and й, Greek tonos, Arabic hamza forms and many marks, which JavaScript's
 * NFD takes off, so "ещё" and "еще" are one word to the tests and two to FTS5. A page's rows are
 * judged one way or the other depending on how it found them (recording-search.ts), so where a
 * text or the query holds any other character, FTS5 judges the row: the same answer on every page.
 */
const FOLDED_ALIKE =
  /^[\x00-\x7f\u0080-\u00b4\u00b6-\u017e\u0180-\u01df\u01e4-\u01ed\u01f0-\u01fb\u0200-\u0304\u0306-\u030c\u030f\u0311\u031b\u0323-\u0328\u032d-\u032e\u0330-\u0331\u1e00-\u1e9a\u1e9c-\u1eff\u2000-\u2064\u206a-\u206f\u20a0-\u20b9\u2100-\u2189\u2190-\u23f3\u2500-\u26ff\u2701-\u27bf]*$/;
const ASCII_TEXT = /^[\x00-\x7f]*$/;

/** Whether the text tests fold `text` as FTS5 does (see FOLDED_ALIKE). */
export const foldsLikeIndex = (text: string): boolean => ASCII_TEXT.test(text) || FOLDED_ALIKE.test(text);

/**
 * Text folded the way the index folds it: lower case, diacritics removed. Character by character,
 * which is the same as withoutDiacritics of the whole text (marks are dropped, so their canonical
 * order does not matter) and 5-10 times faster on transcripts with a few accented words.
 */
export const folded = (text: string): string => text.toLowerCase().replace(NON_ASCII, foldedChar);

/**
 * A test for consecutive words (folded) in the title or in the transcript (a phrase never spans
 * the two): the first starts a word, the last starts (prefix) or is (exact) a word. The first word
 * is found with indexOf (a regex with a look-behind at every position cost 50-200 µs per recording).
 */
function textTest(words: string[], prefix: boolean): Condition['test'] {
  const first = words[0]!;
  // An empty first word would be found at every index (and indexOf('') never returns -1).
  if (first === '') return () => false;
  const rest = words.length > 1 ? new RegExp(words.slice(1).map((w) => `${NOT_WORD}+${escapeRegExp(w)}`).join(''), 'uy') : null;
  const found = (text: string): boolean => {
    if (text === '') return false;
    const t = folded(text);
    for (let i = t.indexOf(first); i !== -1; i = t.indexOf(first, i + 1)) {
      if (wordBefore(t, i)) continue;
      let end = i + first.length;
      if (rest) {
        rest.lastIndex = end;
        if (!rest.test(t)) continue;
        end = rest.lastIndex;
      }
      if (!prefix && wordAt(t, end)) continue;
      return true;
    }
    return false;
  };
  return (row) => found(row.title) || found(row.transcript);
}
