import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFinalAttempt, MAX_ATTEMPTS, retryDelayMs } from '../../src/delivery/retry-schedule';

const MINUTE = 60_000;

test('a delivery gets exactly 8 attempts, waiting 1, 2, 4 … 64 minutes between them', () => {
  let attemptsDone = 0;
  const waits: number[] = [];
  for (;;) {
    attemptsDone += 1; // the attempt fails
    if (isFinalAttempt(attemptsDone)) break;
    waits.push(retryDelayMs(attemptsDone, MINUTE) / MINUTE);
  }
  assert.equal(MAX_ATTEMPTS, 8);
  assert.equal(attemptsDone, 8);
  assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64]);
});

test('the first retry waits the configured base', () => {
  assert.equal(retryDelayMs(1, 250), 250);
  assert.equal(retryDelayMs(3, 250), 1000);
});

test('there is no retry before the first attempt or after the last', () => {
  assert.equal(isFinalAttempt(7), false);
  assert.equal(isFinalAttempt(8), true);
  assert.throws(() => retryDelayMs(0, MINUTE), RangeError);
  assert.throws(() => retryDelayMs(MAX_ATTEMPTS, MINUTE), RangeError);
  assert.throws(() => retryDelayMs(1.5, MINUTE), RangeError);
  assert.throws(() => retryDelayMs(1, -1), RangeError);
});
