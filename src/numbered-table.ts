// Short-lived entries under increasing numbers, for a path taken once per request (the answers in
// flight: http/graceful-close.ts; the writes awaiting the writer thread: writer-thread.ts; the
// webhook sends in progress: delivery/scheduler.ts).
//
// Not a Map or Set, on purpose. A Map or Set that lives long (V8's old generation) and has entries
// added and deleted at a high rate rebuilds its hash table every few dozen deletions, and each
// discarded table keeps a pointer to the one that replaced it (for an iterator that may still be
// walking it). So each table, and every entry it held, survives the young-generation collections
// until the next full one, when nothing points to any of them any more. Under 32 connections of
// creates the one Set of in-flight answers made each young collection copy, then promote, ~1 MB
// more (pause 4.6 → 2.4 ms without it). An object with number keys (a dictionary of its own
// elements) has no such chain. bench/results-notes.md (2026-11-27) has the measurement and a
// 20-line reproduction; test/numbered-table.test.ts checks that the effect stays away.
export class NumberedTable<T> {
  private entries: Record<number, T> = Object.create(null) as Record<number, T>;
  private count = 0;
  private next = 0;

  /** Stores `value` under the next number, and returns that number. */
  add(value: T): number {
    const id = this.next++;
    this.entries[id] = value;
    this.count++;
    return id;
  }

  /** Removes and returns the entry under `id` (undefined when there is none). */
  take(id: number): T | undefined {
    const value = this.entries[id];
    if (value === undefined) return undefined;
    delete this.entries[id];
    this.count--;
    return value;
  }

  get size(): number {
    return this.count;
  }

  /** The entries, oldest first (a copy: the table may change while they are used). */
  values(): T[] {
    return Object.values(this.entries);
  }

  /** Removes every entry and returns them, oldest first. */
  clear(): T[] {
    const all = this.values();
    this.entries = Object.create(null) as Record<number, T>;
    this.count = 0;
    return all;
  }
}
