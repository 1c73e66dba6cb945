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
import type { Core } from '../context';
import { after, SearchTermStore } from '../store/search-term-store';

const WORD_SEPARATORS = /[^\p{L}\p{N}\p{M}\p{Co}]+/u;
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}/gu;
const ASCII_START = /^[a-z0-9]/;
/** Cap of the in-memory set of forms known to be stored (bounded memory; a reset costs re-checks). */
const KNOWN_MAX = 500_000;

/** The words of a text as the search sees them: lower-cased runs of letters, numbers and marks. */
export function textWords(text: string): string[] {
  return text.toLowerCase().split(WORD_SEPARATORS).filter((w) => w !== '');
}

/** A word with its diacritics removed ("café" → "cafe"); ASCII words are returned as they are. */
export const withoutDiacritics = (word: string): string => (NON_ASCII.test(word) ? word.normalize('NFD').replace(MARKS, '') : word);

function addForms(into: Set<string>, word: string): void {
  into.add(word);
  const folded = withoutDiacritics(word);
  if (folded !== word) into.add(folded);
}

export class SearchTerms {
  private readonly store: SearchTermStore;
  /** Forms committed to recording_terms (a subset of the table: filled only after commit). */
  private known = new Set<string>();

  constructor(private readonly core: Core) {
    this.store = new SearchTermStore(core.db);
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
    const gone = new Set<string>();
    for (const text of removed) for (const word of textWords(text)) addForms(gone, word);
    if (gone.size === 0) return;
    const still = new Set<string>();
    for (const text of kept) for (const word of textWords(text)) addForms(still, word);
    for (const form of still) gone.delete(form);
    let indexed = false;
    for (const form of gone) {
      if (!ASCII_START.test(form)) continue;
      if (!indexed) {
        indexPending();
        indexed = true;
      }
      if (this.store.stillIndexed(form)) continue;
      this.store.remove(form);
      // Dropping from the cache is always safe (it only causes a re-check), even on rollback.
      this.known.delete(form);
    }
  }

  /** Up to `limit` stored forms that start with the ASCII word `prefix`. */
  expansions(prefix: string, limit: number): string[] {
    return this.store.withPrefix(prefix, limit);
  }

  /**
   * The distinct beginnings of `chars` characters (or whole forms, if shorter) of the stored forms
   * that start with `prefix`, at most `limit` + 1 of them: a skip scan, one index seek each.
   */
  continuations(prefix: string, chars: number, limit: number): string[] {
    const out: string[] = [];
    // The prefix itself may be a stored form: start just before it.
    let term = this.expansions(prefix, 1)[0];
    while (term !== undefined && term.startsWith(prefix) && out.length <= limit) {
      const letters = Array.from(term);
      const head = letters.slice(0, chars).join('');
      out.push(head);
      // A whole form shorter than `chars` is followed by its own continuations; a head by the next head.
      term = this.store.next(letters.length < chars ? term : after(head));
    }
    return out;
  }

  private remember(forms: string[]): void {
    if (this.known.size + forms.length > KNOWN_MAX) this.known = new Set();
    for (const f of forms) this.known.add(f);
  }
}
