// The SSE parser `reclib listen` reads the stream with: any line ending, split anywhere across
// chunks; data lines joined; comments ignored; the last id kept across messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser, type SseEvent } from '../../src/cli/sse-parser';

function parse(chunks: string[]): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  return out;
}

describe('SseParser', () => {
  const text = ': ping\n\nid: 7\nevent: recording.created\ndata: {"id":"7"}\n\ndata: a\r\ndata: b\r\n\r\nid: 9\revent: x\rdata:c\r\r';
  const expected = [
    { id: '7', event: 'recording.created', data: '{"id":"7"}' },
    { id: '7', event: 'message', data: 'a\nb' },
    { id: '9', event: 'x', data: 'c' },
  ];

  it('reads messages with LF, CRLF and CR line endings, joins data lines, skips comments, keeps the last id', () => {
    assert.deepEqual(parse([text]), expected);
  });

  it('gives the same messages however the text is split into chunks (a CRLF split in two included)', () => {
    for (let i = 1; i < text.length; i++) assert.deepEqual(parse([text.slice(0, i), text.slice(i)]), expected, `split at ${i}`);
    assert.deepEqual(parse([...text]), expected, 'one character at a time');
  });

  it('a message without a closing blank line is not dispatched yet', () => {
    assert.deepEqual(parse(['id: 1\ndata: x\n']), []);
  });
});
