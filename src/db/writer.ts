// The write path. Every write of every service runs through Writer.write(), as one
// BEGIN IMMEDIATE transaction: a deferred transaction that reads and then writes fails at once
// with SQLITE_BUSY_SNAPSHOT when another connection (the CLI) committed in between, while
// IMMEDIATE takes the write lock up front and waits busy_timeout for it.
// Keeping it in one place lets a later step batch several requests into one commit.
import type { Db } from './open';

export class Writer {
  private afterCommit: Array<() => void> = [];
  private depth = 0;

  constructor(readonly db: Db) {}

  /** Runs fn in one immediate transaction (nested calls join the outer one). No await inside. */
  write<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    const hooks: Array<() => void> = [];
    this.afterCommit = hooks;
    this.depth++;
    let result: T;
    try {
      result = this.db.transaction(fn).immediate();
    } finally {
      this.depth--;
      this.afterCommit = [];
    }
    for (const hook of hooks) hook();
    return result;
  }

  /** Schedules work (e.g. waking the delivery scheduler) for after the current commit. */
  onCommit(hook: () => void): void {
    if (this.depth === 0) hook();
    else this.afterCommit.push(hook);
  }
}
