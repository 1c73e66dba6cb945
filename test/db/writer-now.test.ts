// Writer.now: one clock reading per write transaction, so every row one change (or one group of
// changes) stamps carries the same time, however often the code asks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import type { Clock } from '../../src/clock';
import { Writer } from '../../src/db/writer';

/** A clock that moves 1 ms each time it is read: any second reading shows. */
function tickingClock(start = 1_000): Clock & { reads: number } {
  const clock = {
    reads: 0,
    now: () => start + clock.reads++,
  };
  return clock;
}

describe('Writer.now', () => {
  test('is read once per write(): every call inside the transaction, nested writes included, sees the same time', () => {
    const clock = tickingClock();
    const writer = new Writer(openSqlite(':memory:'), undefined, clock);
    const seen = writer.write(() => [writer.now, writer.now, writer.write(() => writer.now)]);
    assert.deepEqual(seen, [1_000, 1_000, 1_000]);
    assert.equal(clock.reads, 1);
  });

  test('is shared by every member of a group commit', async () => {
    const writer = new Writer(openSqlite(':memory:'), undefined, tickingClock());
    const times = await Promise.all([writer.writeGrouped(() => writer.now), writer.writeGrouped(() => writer.now), writer.writeGrouped(() => writer.now)]);
    assert.deepEqual(times, [1_000, 1_000, 1_000]);
  });

  test("outside a transaction it is the clock's time, and the next transaction reads the clock again", () => {
    const writer = new Writer(openSqlite(':memory:'), undefined, tickingClock());
    assert.equal(writer.write(() => writer.now), 1_000);
    assert.equal(writer.now, 1_001);
    assert.equal(writer.write(() => writer.now), 1_002);
  });
});
