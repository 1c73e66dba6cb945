// The short excerpt an MCP listing shows per recording, so an assistant can judge a result without
// fetching it. For a search it is cut around the first word of the text that a query word matches
// the way the search matches (case- and accent-insensitive prefix); otherwise it is the start.
import { textWords, withoutDiacritics, WORD_CLASS } from '../services/search-terms';

/**
 * A snippet's length at most, ellipses included, in UTF-16 units (as JavaScript and the README's
 * "up to 160 characters" count: an emoji outside the BMP takes two).
 */
export const SNIPPET_CHARS = 160;

const WORD = new RegExp(`[${WORD_CLASS}]+`, 'gu');
const fold = (word: string): string => withoutDiacritics(word.toLowerCase());

/** Where the first word of `text` starting with one of `words` (folded) begins; -1 if none. */
function firstMatch(text: string, words: readonly string[]): number {
  if (words.length === 0) return -1;
  for (const m of text.matchAll(WORD)) {
    const candidate = fold(m[0]);
    if (words.some((w) => candidate.startsWith(w))) return m.index;
  }
  return -1;
}

/** Whether `i` falls between the two halves of a surrogate pair (cutting there would leave half a character). */
const insidePair = (s: string, i: number): boolean =>
  i > 0 && i < s.length && /[\uD800-\uDBFF]/.test(s[i - 1]!) && /[\uDC00-\uDFFF]/.test(s[i]!);

/**
 * An excerpt of `text` of at most SNIPPET_CHARS UTF-16 units, "…" included where it was cut, on
 * one line, cut at spaces where possible and never inside a surrogate pair; around the first word
 * `query` matches, if any.
 */
export function snippet(text: string, query?: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const at = query === undefined ? -1 : firstMatch(flat, textWords(query).map(fold));
  // A third of the room before the match gives the reader its context; a match near the end
  // starts early enough to fill the room left by the leading "…".
  let start = at <= 0 ? 0 : Math.max(0, Math.min(at - Math.floor(SNIPPET_CHARS / 3), flat.length - (SNIPPET_CHARS - 1)));
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < (at < 0 ? start + 20 : at)) start = space + 1;
    else if (insidePair(flat, start)) start++;
  }
  // The room for text: the whole bound less an ellipsis at each end that gets one.
  let room = SNIPPET_CHARS - (start > 0 ? 1 : 0);
  let end = flat.length;
  if (start + room < flat.length) {
    room--;
    end = start + room;
    const space = flat.lastIndexOf(' ', end);
    if (space > start + room / 2) end = space;
    else if (insidePair(flat, end)) end--;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}
