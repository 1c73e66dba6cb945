// The log's writes (src/observe/log.ts): request lines wait to be written together, at most
// REQUEST_FLUSH_MS after the first; any other line is written at once, after the request lines
// before it, so the log keeps its order; flush() writes what waits (before exit).
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { createLogger, REQUEST_FLUSH_MS } from '../../src/observe/log';

const request = (n: number) => ({ requestId: `req_${n}`, method: 'GET', route: '/healthz', status: 200, ms: 1 });

describe('the log writes request lines together', () => {
  it('waits up to REQUEST_FLUSH_MS, writes them in one write, and writes other lines at once, in order', (t) => {
    mock.timers.enable({ apis: ['setTimeout'] });
    t.after(() => mock.timers.reset());
    const writes: string[] = [];
    const logger = createLogger('text', (chunk) => writes.push(chunk));

    logger.request(request(1));
    logger.request(request(2));
    assert.equal(writes.length, 0, 'not yet');
    mock.timers.tick(REQUEST_FLUSH_MS - 1);
    assert.equal(writes.length, 0, 'still waiting');
    mock.timers.tick(1);
    assert.equal(writes.length, 1, 'one write for both');
    assert.match(writes[0]!, /req_1\n.*req_2\n$/s);

    logger.request(request(3));
    logger.event('warn', 'delivery failed', { id: 'dlv_1' });
    assert.equal(writes.length, 2, 'a line that is not a request is written at once');
    assert.match(writes[1]!, /req_3\n.*delivery failed id=dlv_1\n$/s, 'after the request line before it');
    mock.timers.tick(REQUEST_FLUSH_MS);
    assert.equal(writes.length, 2, 'nothing left to write');

    logger.request(request(4));
    logger.flush();
    assert.equal(writes.length, 3);
    assert.match(writes[2]!, /req_4\n$/);
  });

  it('writes a burst in pieces rather than holding it all', (t) => {
    mock.timers.enable({ apis: ['setTimeout'] });
    t.after(() => mock.timers.reset());
    const writes: string[] = [];
    const logger = createLogger('json', (chunk) => writes.push(chunk));
    for (let i = 0; i < 1000; i++) logger.request(request(i));
    assert.ok(writes.length >= 3, `${writes.length} writes before the timer`);
    mock.timers.tick(REQUEST_FLUSH_MS);
    const lines = writes.join('').trimEnd().split('\n');
    assert.equal(lines.length, 1000);
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { requestId: string }).requestId),
      Array.from({ length: 1000 }, (_, i) => `req_${i}`),
    );
  });
});
