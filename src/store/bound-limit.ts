// LIMIT with a bound parameter, without SQLite preparing the statement again at every run.
//
// Since SQLite 3.47 the query planner reads the value bound to a LIMIT parameter (to plan for the
// rows it will return) and marks the statement as depending on that parameter; binding it again,
// even to the same value, expires the statement, and its next step parses and plans it anew
// (sqlite3Reprepare). better-sqlite3 binds every parameter at every run, so each run of such a
// statement was a prepare too: at a million recordings a listing page's statement took ~50 µs a run
// against ~29 µs without it, and re-preparing was ~5% of the server's main thread in a CPU profile
// of the bench's searches (bench/results-notes.md, 2026-11-27 late). CAST(... AS INTEGER) is not
// a parameter to the planner: the limit is read when the statement runs, as before 3.47, and the
// plans are the same (the query-plan tests). test/store/bound-limit.test.ts keeps a parameter
// bound bare after LIMIT or OFFSET out of the sources.
export const limitTo = (param: '?' | `@${string}`): string => `LIMIT CAST(${param} AS INTEGER)`;
