// Rows as plain objects, built in JavaScript from better-sqlite3's raw arrays, on its classic
// build (12.x, Node 20: db/sqlite.ts).
//
// better-sqlite3 12.x builds each row object in C++, one v8::Object::Set per column, which V8 runs
// on its slow path (a lookup of the next map transition per property, outside the JIT). A
// recording has 26 columns, and a search page or a listing reads 50 or more rows: in a `perf` of
// the server's main thread answering common-word searches at 1,000,000 recordings, turning rows
// into objects (Data::GetFlatRowJS) was 33% of its samples, half of it in Object::Set. Read as
// arrays (raw mode: one v8::Array of the values) and copied into an object literal of fixed shape,
// which V8 compiles to a map it already knows, 51 rows of the search's candidates took 230 µs
// instead of 375 µs (bench/results-notes.md, 2026-11-28). The objects are the same: one own
// enumerable property per column, in the columns' order, a later column of the same name winning.
// The Node-API build (13.x, Node 22 and later, the Docker image's) already builds its rows with a
// generated object literal: there the statement is used as it is.
//
// The names are read from the statement once, when it is wrapped. SQLite prepares a statement
// again after a schema change (a newer CLI migrating the file under a running server), and a
// `SELECT *` would then return other columns, or the same ones in another order, under the old
// names: so a statement read through objectRows() names its columns (RECORDING_COLUMNS), and one
// with `*` in its select list is refused.
import type { Statement } from 'better-sqlite3';
import { sqliteBuild } from '../db/sqlite';

/** What the search, the listings and the event feed ask of a statement that returns rows. */
export interface ObjectRows<P extends unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  /** Rows one at a time; ending the loop early (break, return, throw) releases the statement. */
  iterate(...params: P): IterableIterator<R>;
}

/**
 * A function that makes the object of one row from its values: an object literal with the column
 * names as keys, so that every row of a statement shares one hidden class.
 */
export function rowBuilder(names: readonly string[]): (values: unknown[]) => unknown {
  // A literal's "__proto__" key would set the prototype instead of a property.
  if (names.includes('__proto__')) throw new Error('a column named __proto__ cannot be read as an object property');
  const fields = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ');
  return new Function('v', `return { ${fields} };`) as (values: unknown[]) => unknown;
}

/** A select list with `*` or `table.*` in it (a `count(*)` is not one). */
const STAR = /\bselect\s+(?:distinct\s+|all\s+)?(?:[\w"]+\s*\.\s*)?\*|,\s*(?:[\w"]+\s*\.\s*)?\*/i;

/**
 * The rows of `stmt` as objects, as better-sqlite3 would return them. On the classic build the
 * statement is switched to raw mode: prepare it for this alone, as a statement returning whole
 * rows (not plucked or expanded), with its columns named (see the top).
 */
export function objectRows<P extends unknown[], R>(stmt: Statement<P, R>): ObjectRows<P, R> {
  if (STAR.test(stmt.source)) throw new Error(`objectRows() needs the columns named, not *: ${stmt.source}`);
  if (sqliteBuild() === 'napi') return stmt;
  const build = rowBuilder(stmt.columns().map((c) => c.name)) as (values: unknown[]) => R;
  const raw = stmt.raw(true) as unknown as Statement<P, unknown[]>;
  return {
    get: (...params) => {
      const values = raw.get(...params);
      return values === undefined ? undefined : build(values);
    },
    all: (...params) => raw.all(...params).map(build),
    iterate: (...params) => {
      const rows = raw.iterate(...params);
      const it: IterableIterator<R> = {
        next: () => {
          const step = rows.next();
          return step.done === true ? step : { done: false, value: build(step.value) };
        },
        return: (value?: unknown) => {
          rows.return?.();
          return { done: true, value: value as R };
        },
        [Symbol.iterator]: () => it,
      };
      return it;
    },
  };
}
