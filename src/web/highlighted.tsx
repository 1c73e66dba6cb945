// Text with the words a search matched wrapped in <mark>.
import { markMatches, type parseQuery } from './search-match';

export function Highlighted({ text, terms }: { text: string; terms: ReturnType<typeof parseQuery> }) {
  return (
    <>
      {markMatches(text, terms).map((p, i) => (p.marked ? <mark key={i}>{p.text}</mark> : p.text))}
    </>
  );
}
