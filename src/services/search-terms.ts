// The word forms of indexed text, kept so that a prefix query can be rewritten into the few whole
// words it stands for. FTS5 answers `"meet"*` without a matching prefix index by first merging the
// doclists of every word starting with "meet" (cost: every match in the library); `("meet" OR
// "meeting" OR "meetings")` is read lazily in rowid order and stops after a page.
//
// The forms are found with a JavaScript approximation of FTS5's unicode61 tokenizer (letters,
// numbers, marks and private-use characters make words; lower-cased; diacritics removed as a
// second form). Only forms starting with [a-z0-9] are kept, because only query words that are
// ASCII once their diacritics are removed are expanded (recording-search.ts); other words use
// FTS5's own prefix query, exact by construction.
// Forms of deleted or edited-away text are dropped once no live recording has them (forget()).
// Asking the index whether a word is still held costs a seek in every index segment (~10 µs each,
// 40-odd segments after a burst of creates at 1M recordings), once per removed word: at a million
// recordings that was a third of an edit. So each answer names a witness, the recording the index
// returned, and the next removal of the word first reads the witness's text (one row, shared by
// the words it vouches for). A form is kept only while a live recording's text has it, whoever
// changed that recording since (another process too): the row is read, not remembered.
import type { Core } from '../context';
import { ftsQuote } from '../store/fts-quote';
import { SearchTermStore } from '../store/search-term-store';
import { TokenizerStore } from '../store/tokenizer-store';
import type { IndexedText } from './index-change';

/** What a word is made of, to the search: letters, numbers, marks, private use (a character class's body, for RegExp). */
export const WORD_CLASS = '\\p{L}\\p{N}\\p{M}\\p{Co}';
/**
 * The patterns of word characters, made at their first use rather than at every start: the
 * Unicode property classes cost ~1 ms to build there. `separators` splits a text into words,
 * `char` is one word character, `run` a run of them from lastIndex (sticky).
 */
let wordPatterns: { separators: RegExp; char: RegExp; run: RegExp } | undefined;
const words = () =>
  (wordPatterns ??= { separators: new RegExp(`[^${WORD_CLASS}]+`, 'u'), char: new RegExp(`^[${WORD_CLASS}]$`, 'u'), run: new RegExp(`[${WORD_CLASS}]*`, 'uy') });
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}/gu;
const ASCII_START = /^[a-z0-9]/;
/** Cap of the in-memory set of forms known to be stored (bounded memory; a reset costs re-checks). */
const KNOWN_MAX = 500_000;
const ASCII_ALNUM = /^[a-zA-Z0-9]+$/;
/** Cap of the remembered characters of tokens() (a text has few distinct non-ASCII characters). */
const TOKEN_CHARS_MAX = 10_000;
/** Recordings read at most to decide whether a form FTS5 splits is still in some live text. */
const STILL_HAS_ROWS = 2_000;
/** Cap of the remembered witnesses (form → seq; bounded memory, a reset costs index questions). */
const WITNESSES_MAX = 100_000;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
/** FTS5 cuts a token to FTS5_MAX_TOKEN_SIZE (32,768) bytes: indexedWords() leaves a text with a token near that to the full update. */
const NEAR_CUT = 32_768 - 4;

/** FTS5's tokens of ASCII text (letters and digits, lower-cased; all else separates), or null for other text. */
function asciiTokens(text: string): string[] | null {
  if (NON_ASCII.test(text)) return null;
  return text
    .toLowerCase()
    .split(ASCII_SEPARATORS)
    .filter((t) => t !== '');
}

/** The words of a text as the search sees them: lower-cased runs of letters, numbers and marks. */
export function textWords(text: string): string[] {
  return text.toLowerCase().split(words().separators).filter((w) => w !== '');
}

/** A word with its diacritics removed ("café" → "cafe"); ASCII words are returned as they are. */
export const withoutDiacritics = (word: string): string => (NON_ASCII.test(word) ? word.normalize('NFD').replace(MARKS, '') : word);

function addForms(into: Set<string>, word: string): void {
  into.add(word);
  const folded = withoutDiacritics(word);
  if (folded !== word) into.add(folded);
}

/** Every form of the words of the texts. */
export function formsOf(...texts: string[]): Set<string> {
  const forms = new Set<string>();
  for (const text of texts) for (const word of textWords(text)) addForms(forms, word);
  return forms;
}

/** Whether a code point is part of a word (not matched by the separators). */
function isWordCode(code: number): boolean {
  if (code < 0x80) return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a);
  return words().char.test(String.fromCodePoint(code));
}

/** Whether the code point ending just before index `i` of `t` (a surrogate pair read whole) is part of a word; false at the start. */
export function wordBefore(t: string, i: number): boolean {
  if (i <= 0) return false;
  const c = t.charCodeAt(i - 1);
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
    const high = t.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return isWordCode(t.codePointAt(i - 2)!);
  }
  return isWordCode(c);
}

/** Whether the code point starting at index `i` of `t` is part of a word; false past the end. */
export function wordAt(t: string, i: number): boolean {
  return i < t.length && isWordCode(t.codePointAt(i)!);
}

/**
 * Whether the lower-cased text has `form` (word characters only) as a whole word: an occurrence
 * with no word character on either side. An occurrence that fails lies inside a longer word, and
 * so would every later one starting in that word: the search goes on after the word's end, so a
 * call reads the text about once however often the form occurs inside words ("a" × 30,000 in
 * "a" × 60,000 took a second when each occurrence was tried).
 */
function hasWord(lower: string, form: string): boolean {
  let at = lower.indexOf(form);
  while (at !== -1) {
    const end = at + form.length;
    if (!wordBefore(lower, at) && !wordAt(lower, end)) return true;
    const run = words().run;
    run.lastIndex = end;
    run.exec(lower);
    at = lower.indexOf(form, Math.max(run.lastIndex, end));
  }
  return false;
}

/**
 * A witness's title and transcript, asked whether their words have a form (forget()): the same
 * answer as formsOf(title, transcript).has(form), for less. A witness is asked about the few forms
 * it vouches for, and the set of every form of a ~1 KB text took ~43 µs to build (a regular
 * expression split, then a Set of ~140 strings), against ~0.6 µs for a search of the lower-cased
 * text: at a million recordings building those sets was a quarter of the writer thread's time in
 * the bench's edits and deletes. A form found as a whole word is one of the text's words; one not
 * found may still be the text's form without diacritics ("cafe" of "café"), so that and a form
 * with a separator in it are answered from the set, built once. So is every question once the
 * searches have read the text ~32 times over (a long text asked about many forms).
 */
export class WitnessText {
  private readonly lower: [string, string];
  private forms: Set<string> | undefined;
  private budget: number;
  /** Whether title and transcript are ASCII: then every form is a word as it stands. */
  private ascii: boolean | undefined;

  constructor(private readonly text: { title: string; transcript: string }) {
    this.lower = [text.title.toLowerCase(), text.transcript.toLowerCase()];
    this.budget = 32 * (text.title.length + text.transcript.length + 2);
  }

  has(form: string): boolean {
    if (this.forms === undefined && this.budget > 0 && form !== '' && !words().separators.test(form)) {
      this.budget -= this.lower[0].length + this.lower[1].length + 2;
      if (hasWord(this.lower[0], form) || hasWord(this.lower[1], form)) return true;
      this.ascii ??= !NON_ASCII.test(this.text.title) && !NON_ASCII.test(this.text.transcript);
      if (this.ascii) return false;
    }
    this.forms ??= formsOf(this.text.title, this.text.transcript);
    return this.forms.has(form);
  }
}

export class SearchTerms {
  private readonly store: SearchTermStore;
  private readonly tokenizer: TokenizerStore;
  /** Forms committed to recording_terms (a subset of the table: filled only after commit). */
  private known = new Set<string>();
  /** Characters asked of FTS5 (tokens()): whether its tokenizer keeps them in a token. */
  private readonly tokenChars = new Map<string, boolean>();
  /** Per form, the seq of a recording whose text had it when the index was last asked (see the top). */
  private witnesses = new Map<string, number>();

  constructor(private readonly core: Core) {
    this.store = new SearchTermStore(core.db);
    this.tokenizer = new TokenizerStore(core.db);
  }

  /** Records the word forms of the texts. Call inside the transaction that indexes them. */
  note(...texts: string[]): void {
    let fresh: Set<string> | undefined;
    for (const text of texts) {
      if (text === '') continue;
      for (const word of textWords(text)) {
        if (this.known.has(word)) continue;
        fresh ??= new Set();
        addForms(fresh, word);
      }
    }
    if (!fresh) return;
    const added: string[] = [];
    for (const form of fresh) {
      if (this.known.has(form) || !ASCII_START.test(form)) continue;
      this.store.add(form);
      added.push(form);
    }
    // Only after the commit: a rolled-back transaction must not leave forms marked as stored.
    if (added.length > 0) this.core.writer.onCommit(() => this.remember(added));
  }

  /**
   * Drops the forms of removed text (a delete, or the words an edit took out) that no live
   * recording still has, so deleted text does not live on in the vocabulary. Call inside the
   * transaction; `indexPending` brings the FTS index up to date with the transaction (text noted
   * for indexing at commit), once, before the first question asked of it.
   */
  forget(removed: string[], kept: string[], indexPending: () => void): void {
    const gone = formsOf(...removed);
    if (gone.size === 0) return;
    for (const form of formsOf(...kept)) gone.delete(form);
    let indexed = false;
    // The text of each witness read in this call (null: not live).
    const read = new Map<number, WitnessText | null>();
    for (const form of gone) {
      if (!ASCII_START.test(form)) continue;
      if (this.witnessed(form, read)) continue;
      if (!indexed) {
        indexPending();
        indexed = true;
      }
      if (this.stillHas(form)) continue;
      this.store.remove(form);
      // Dropping from the cache is always safe (it only causes a re-check), even on rollback.
      this.known.delete(form);
    }
  }

  /**
   * The tokens FTS5 makes of a word of the search (its characters unchanged): the runs of characters
   * its tokenizer keeps. Mostly the word itself; the two differ where the tokenizer's Unicode tables
   * and the search's idea of a word part ways (a spacing mark such as Devanagari "ि" is part of a
   * word to the search, a separator to unicode61). The index has no positions (detail=none), so
   * such a word cannot be asked for as one quoted string (search-plan.ts asks for its tokens).
   */
  tokens(word: string): string[] {
    if (ASCII_ALNUM.test(word)) return [word];
    const out: string[] = [];
    let run = '';
    for (const ch of word) {
      if (this.isTokenChar(ch)) run += ch;
      else if (run !== '') {
        out.push(run);
        run = '';
      }
    }
    if (run !== '') out.push(run);
    return out;
  }

  /**
   * The tokens FTS5's tokenizer makes of each pair of title and transcript, exactly (for
   * index-change.ts). ASCII text is split here: letters and digits make tokens, lower-cased, every
   * other character separates them. Text with any other character is tokenized by FTS5 itself
   * (store/tokenizer-store.ts), since its case folding and diacritics tables are SQLite's own. Null
   * when neither can be had.
   */
  indexedWords(pairs: Array<{ title: string; transcript: string }>): IndexedText[] | null {
    let words: IndexedText[] | null = [];
    for (const p of pairs) {
      const title = asciiTokens(p.title);
      const transcript = title && asciiTokens(p.transcript);
      if (!title || !transcript) {
        words = this.tokenizer.tokenize(pairs);
        break;
      }
      words.push({ title, transcript });
    }
    // FTS5 cuts a token at FTS5_MAX_TOKEN bytes, possibly inside a character, and what it keeps
    // then reads back as another word: such a text is left to the full update.
    const nearCut = (t: string) => t.length * 3 >= NEAR_CUT && Buffer.byteLength(t) >= NEAR_CUT;
    if (words?.some((w) => w.title.some(nearCut) || w.transcript.some(nearCut))) return null;
    return words;
  }

  /** Whether the tokenizer keeps a character (a code point) in a token: asked of FTS5 once per character. */
  private isTokenChar(ch: string): boolean {
    const code = ch.codePointAt(0)!;
    if (code < 0x80) return ASCII_ALNUM.test(ch);
    let kept = this.tokenChars.get(ch);
    if (kept === undefined) {
      if (this.tokenChars.size >= TOKEN_CHARS_MAX) this.tokenChars.clear();
      // "a?a" is one token exactly when ? is kept; otherwise FTS5 refuses it as a phrase.
      kept = this.store.oneToken(`a${ch}a`);
      this.tokenChars.set(ch, kept);
    }
    return kept;
  }

  /**
   * Whether a live recording still has the word form. A form FTS5 reads as one token is asked of
   * the index directly; a form it splits is looked for in the text of the recordings that have all
   * its tokens (at most STILL_HAS_ROWS of them; past that it is kept, which only costs a stale
   * expansion that matches nothing).
   */
  private stillHas(form: string): boolean {
    const tokens = this.tokens(form);
    if (tokens.length === 1 && tokens[0] === form) {
      const seq = this.store.indexedIn(form);
      if (seq === undefined) return false;
      if (this.witnesses.size >= WITNESSES_MAX) this.witnesses = new Map();
      this.witnesses.set(form, seq);
      return true;
    }
    if (tokens.length === 0) return false;
    const rows = this.store.texts(tokens.map(ftsQuote).join(' AND '), STILL_HAS_ROWS + 1);
    if (rows.length > STILL_HAS_ROWS) return true;
    return rows.some((r) => formsOf(r.title, r.transcript).has(form));
  }

  /**
   * Whether the form's witness is live and its text (as it is now, in this transaction) still has
   * the form; if not, the witness is dropped. `read` keeps the text of each row read in one call.
   */
  private witnessed(form: string, read: Map<number, WitnessText | null>): boolean {
    const seq = this.witnesses.get(form);
    if (seq === undefined) return false;
    let text = read.get(seq);
    if (text === undefined) {
      const row = this.store.liveText(seq);
      text = row ? new WitnessText(row) : null;
      read.set(seq, text);
    }
    if (text?.has(form)) return true;
    this.witnesses.delete(form);
    return false;
  }

  /** Up to `limit` stored forms that start with the ASCII word `prefix`. */
  expansions(prefix: string, limit: number): string[] {
    return this.store.withPrefix(prefix, limit);
  }

  /**
   * After the commit that added `forms`: those still in the table. A later member of the same
   * group can have removed one (a PATCH adding "zebra", the next taking it out, committed
   * together): remembered anyway, the word was never added again, and recordings with it were
   * found by no prefix search until a restart.
   */
  private remember(forms: string[]): void {
    if (this.known.size + forms.length > KNOWN_MAX) this.known = new Set();
    for (const f of forms) if (this.store.has(f)) this.known.add(f);
  }
}
