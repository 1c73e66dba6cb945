// Which words of a text a search matched, by the API's rules (src/services/recording-search.ts):
// words are runs of letters, numbers and marks; compared lower-cased and without diacritics; a
// query word matches a word it begins ("meet" → "meeting"), except a one-character word, which
// matches only itself; "double quotes" make a phrase of consecutive whole words.

const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const MARKS = /\p{M}/gu;

const fold = (w: string): string => w.toLowerCase().normalize('NFD').replace(MARKS, '');

interface Term {
  words: string[];
  phrase: boolean;
}

/** q → its words and phrases; an unmatched quote opens a phrase that runs to the end (as the API). */
export function parseQuery(q: string): Term[] {
  const out: Term[] = [];
  q.split('"').forEach((part, i) => {
    const words = (part.match(WORD) ?? []).map(fold);
    if (words.length === 0) return;
    if (i % 2 === 1) out.push({ words, phrase: true });
    else for (const w of words) out.push({ words: [w], phrase: false });
  });
  return out;
}

const wordMatches = (text: string, query: string, phrase: boolean): boolean =>
  phrase || Array.from(query).length === 1 ? text === query : text.startsWith(query);

export interface Piece {
  text: string;
  marked: boolean;
}

/** The text cut into pieces, the matched words (and the gaps inside a matched phrase) marked. */
export function markMatches(text: string, terms: Term[]): Piece[] {
  if (terms.length === 0 || text === '') return [{ text, marked: false }];
  const words = Array.from(text.matchAll(WORD), (m) => ({ start: m.index, end: m.index + m[0].length, folded: fold(m[0]) }));
  const spans: Array<[number, number]> = [];
  for (const term of terms) {
    const n = term.words.length;
    for (let i = 0; i + n <= words.length; i++) {
      let ok = true;
      for (let j = 0; j < n && ok; j++) ok = wordMatches(words[i + j]!.folded, term.words[j]!, term.phrase);
      if (ok) spans.push([words[i]!.start, words[i + n - 1]!.end]);
    }
  }
  if (spans.length === 0) return [{ text, marked: false }];
  spans.sort((a, b) => a[0] - b[0]);
  const pieces: Piece[] = [];
  let at = 0;
  for (const [s, e] of spans) {
    if (e <= at) continue;
    const from = Math.max(s, at);
    if (from > at) pieces.push({ text: text.slice(at, from), marked: false });
    pieces.push({ text: text.slice(from, e), marked: true });
    at = e;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), marked: false });
  return pieces;
}

/**
 * A window of about `size` characters of a long text, around its first match when there is one,
 * cut at word boundaries with an ellipsis where text was left out.
 */
export function excerpt(text: string, terms: Term[], size = 220): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= size) return flat;
  const first = markMatches(flat, terms).findIndex((p) => p.marked);
  let start = 0;
  if (first > 0) {
    const offset = markMatches(flat, terms).slice(0, first).reduce((n, p) => n + p.text.length, 0);
    start = Math.max(0, offset - 60);
  }
  let end = Math.min(flat.length, start + size);
  if (start > 0) start = flat.indexOf(' ', start) + 1 || start;
  if (end < flat.length) end = flat.lastIndexOf(' ', end) > start ? flat.lastIndexOf(' ', end) : end;
  return `${start > 0 ? '… ' : ''}${flat.slice(start, end)}${end < flat.length ? ' …' : ''}`;
}
