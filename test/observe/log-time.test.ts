// The log's timestamps (src/observe/log.ts isoTime): the same text as Date.toISOString, though the
// part up to the second is reused while the second lasts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isoTime } from '../../src/observe/log';

describe('log timestamps', () => {
  it('isoTime gives toISOString for every millisecond around second, minute, day and year boundaries, in any order', () => {
    const edges = [0, 999, 1000, 1001, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), Date.UTC(2024, 1, 29, 12, 0, 0, 5), -1, -1000, -1001, Date.UTC(10000, 0, 1, 0, 0, 0, 7)];
    const times = edges.flatMap((t) => [t - 2, t - 1, t, t + 1, t + 2]);
    // Forwards, backwards (a clock set back) and jumping between far-apart seconds.
    for (const t of [...times, ...[...times].reverse(), ...times.map((_, i) => times[(i * 7) % times.length]!)]) {
      assert.equal(isoTime(t), new Date(t).toISOString(), String(t));
    }
  });

  it('isoTime gives toISOString over random instants between 1970 and 2100 and a run of consecutive milliseconds', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const t = Math.floor(next() * Date.UTC(2100, 0, 1));
      assert.equal(isoTime(t), new Date(t).toISOString(), String(t));
    }
    const start = Date.UTC(2026, 10, 23, 17, 59, 58, 500);
    for (let t = start; t < start + 3_000; t++) assert.equal(isoTime(t), new Date(t).toISOString(), String(t));
  });
});
