// The writer thread's group gate (src/group-gate.ts): how long a group waits for the members the
// main thread is about to hand over. Driven by a fake clock whose wait() plays the main thread.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GroupGate, HOLD_MS, QUIET_MS, SIGNAL, SIGNAL_SLOTS, type GateClock } from '../src/group-gate';

/**
 * A gate on fake time: each wait() first lets `main` act (bump signals, at the current time), then
 * advances the clock by the wait's timeout, or returns at once when `main` posted (as a real post
 * wakes Atomics.wait).
 */
function gateOn(main: (at: number, signals: Int32Array) => void, maxGroup = 64) {
  const signals = new Int32Array(new SharedArrayBuffer(SIGNAL_SLOTS * 4));
  let now = 0;
  const waits: number[] = [];
  const calls: string[] = [];
  const clock: GateClock = {
    now: () => now,
    wait: (s, slot, value, ms) => {
      assert.equal(slot, SIGNAL.posted);
      waits.push(ms);
      main(now, s);
      if (Atomics.load(s, slot) !== value) return;
      now += ms;
    },
    waitAsync: async (s, slot, value, ms) => clock.wait(s, slot, value, ms),
  };
  const gate = new GroupGate(signals, maxGroup, () => calls.push('beforeHold'), clock);
  return { gate, signals, waits, calls, elapsed: () => now };
}

describe('GroupGate.hold', () => {
  test('posts the settled results first, then returns at once when every member the last commit answered is here or posted', () => {
    const g = gateOn(() => assert.fail('must not wait'));
    g.gate.hold(32, 0);
    assert.deepEqual(g.calls, ['beforeHold']);
    // 20 queued here, 12 posted and not read yet: the 32 expected.
    Atomics.store(g.signals, SIGNAL.posted, 12);
    g.gate.hold(20, 12);
    // Read ones no longer count as on their way.
    g.gate.receivedWrites(12);
    Atomics.store(g.signals, SIGNAL.posted, 12 + 16);
    g.gate.hold(16, 16);
    assert.equal(g.elapsed(), 0);
  });

  test('waits while the main thread is at work, and returns once it has been quiet for QUIET_MS', () => {
    let bumps = 0;
    const g = gateOn((at, s) => {
      // The main thread starts a request every 0.1 ms until 1 ms, then nothing arrives.
      if (at < 1) {
        Atomics.add(s, SIGNAL.activity, 1);
        bumps++;
      }
    });
    g.gate.hold(3, 10);
    assert.ok(bumps > 0);
    assert.ok(g.elapsed() >= 1 && g.elapsed() <= 1 + 2 * QUIET_MS, `returned after ${g.elapsed()} ms`);
  });

  test('while the main thread writes the answers of a commit, it waits, but never longer than HOLD_MS', () => {
    const g = gateOn(() => {});
    Atomics.store(g.signals, SIGNAL.answering, 1);
    g.gate.hold(5, 20);
    assert.equal(g.elapsed(), HOLD_MS);
    assert.ok(g.waits.every((ms) => ms > 0 && ms <= QUIET_MS));
  });

  test('a post wakes it, and it returns once the expected members are posted', () => {
    let posts = 0;
    const g = gateOn((_at, s) => {
      // The main thread hands over 4 members at each wake-up.
      Atomics.add(s, SIGNAL.activity, 1);
      Atomics.add(s, SIGNAL.posted, 4);
      posts++;
    });
    g.gate.hold(8, 16);
    assert.equal(posts, 4);
    assert.equal(g.elapsed(), 0);
  });

  test('expects at most maxGroup members', () => {
    const g = gateOn(() => assert.fail('must not wait'), 10);
    g.gate.hold(10, 40);
  });

  test('a main thread that does nothing costs one QUIET_MS', () => {
    const g = gateOn(() => {});
    g.gate.hold(4, 30);
    assert.equal(g.elapsed(), QUIET_MS);
  });

  test('counts on when the shared count of posts wraps past 2^31', () => {
    const g = gateOn(() => assert.fail('must not wait'));
    g.gate.receivedWrites(2 ** 31 - 1);
    // Six more posted than read: the Int32 has wrapped to a negative number.
    Atomics.store(g.signals, SIGNAL.posted, (2 ** 31 - 1 + 6) | 0);
    g.gate.hold(2, 6);
    assert.equal(g.elapsed(), 0);
  });
});
