// The short excerpt an MCP listing shows per recording, so an assistant can judge a result without
// fetching it. For a search it is cut around the first word of the text that a query word matches
// the way the search matches (case- and accent-insensitive prefix); otherwise it is the start.
import { textWords, withoutDiacritics } from '../services/search-terms';

/** Characters of text in a snippet (an ellipsis may be added at either end). */
export const SNIPPET_CHARS = 160;

const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
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

/**
 * An excerpt of `text` of at most SNIPPET_CHARS characters (plus "…" where it was cut), on one
 * line, cut at spaces where possible; around the first word `query` matches, if any.
 */
export function snippet(text: string, query?: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const at = query === undefined ? -1 : firstMatch(flat, textWords(query).map(fold));
  // A third of the room before the match gives the reader its context.
  let start = at <= 0 ? 0 : Math.max(0, Math.min(at - Math.floor(SNIPPET_CHARS / 3), flat.length - SNIPPET_CHARS));
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < (at < 0 ? start + 20 : at)) start = space + 1;
  }
  let end = Math.min(flat.length, start + SNIPPET_CHARS);
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start + SNIPPET_CHARS / 2) end = space;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}
