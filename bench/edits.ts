// Edits and deletes (issue 14 point 3: p99 ≤ 50 ms at 1M), measured with ONE connection: each
// request is sent when the previous one was answered, so its latency is the cost of the request
// itself (admission, hand-over to the writer thread, its transaction and fsync, the answer), not
// a queue of our making. A closed loop of N connections would have N requests in the system at all
// times, and by Little's law each would wait N / throughput whatever a write costs (see the search
// targets in stats.ts); the mixed 8-connection load of the stall measurement shows edits and
// deletes under concurrency, for reference.
//
// What they touch is the expensive case: recordings of the seeded library picked at random across
// its whole time range (not the bench's own fresh creates), whose text is spread over old FTS
// segments that FTS5's secure-delete rewrites. An edit replaces the transcript with a fresh text of
// the corpus (every old word leaves the index, every new one enters); a delete erases the text.
// Each request names the revision it read (If-Match), read from the database just before the run.
import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../src/db/sqlite';
import { CACHE_DIR } from './cache';
import { Corpus, prng } from './corpus';
import { readFtsStructure, segmentCount } from '../src/store/fts-structure';
import { describeStructure } from './fts-structure';
import type { LoadResult, SequenceRequest } from './load';
import type { Scenario } from './scenarios';
import { median, round2 } from './stats';

export type WriteKind = 'edit' | 'delete';
export const WRITE_KINDS: WriteKind[] = ['edit', 'delete'];
export const WRITE_LABELS: Record<WriteKind, string> = {
  edit: 'edit (PATCH transcript of an old recording)',
  delete: 'delete (DELETE an old recording)',
};

export interface WriteSummary {
  kind: WriteKind;
  label: string;
  rounds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Spread of the rounds' p99 (min, max). */
  p99Range: [number, number];
  max: number;
  /** Requests answered per round (median): a p99 of few requests is close to their maximum. */
  requests: number;
  failures: number;
}

export interface WriteResults {
  seconds: number;
  connections: 1;
  /** The FTS5 index's segments when the writes began: an edit's cost grows with their number (fts-cost.ts). */
  indexSegments?: number;
  kinds: WriteSummary[];
  raw: Record<WriteKind, LoadResult[]>;
}

/** Recordings of the library (created before `before`), shuffled; the get scenario's ids left out. */
function libraryIds(db: string, before: number, exclude: Set<string>): string[] {
  const conn = openSqlite(db, { readonly: true, fileMustExist: true });
  try {
    const ids = (conn.prepare('SELECT id FROM recordings WHERE deleted_at IS NULL AND created_at < ?').pluck().all(before) as string[]).filter((id) => !exclude.has(id));
    const rnd = prng(0xed17);
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    return ids;
  } finally {
    conn.close();
  }
}

/**
 * Prepares the request files: edits take recordings from one half of the shuffled library (again
 * and again, with the revision current at each run), deletes from the other (each once).
 */
export class WriteRequests {
  private readonly editPool: string[];
  private readonly deletePool: string[];
  private editAt = 0;
  private deleteAt = 0;
  private texts = 0;
  private readonly corpus: Corpus;

  constructor(
    private readonly db: string,
    private readonly size: number,
    before: number,
    exclude: Set<string>,
  ) {
    const ids = libraryIds(db, before, exclude);
    const half = Math.floor(ids.length / 2);
    this.editPool = ids.slice(0, half);
    this.deletePool = ids.slice(half);
    this.corpus = new Corpus(size);
  }

  /** A file of `count` requests of `kind` (more than a run can send: each is used once). */
  file(kind: WriteKind, count: number, tag: string): string {
    const conn = openSqlite(this.db, { readonly: true, fileMustExist: true });
    const current = conn.prepare<[string], { revision: number; deleted_at: number | null }>('SELECT revision, deleted_at FROM recordings WHERE id = ?');
    const requests: SequenceRequest[] = [];
    try {
      while (requests.length < count) {
        const pool = kind === 'edit' ? this.editPool : this.deletePool;
        if (pool.length === 0) throw new Error('no recordings left to edit or delete');
        if (kind === 'delete' && this.deleteAt >= pool.length) throw new Error(`all ${pool.length} recordings set aside for deletes are used: run fewer rounds or a larger corpus`);
        const id = kind === 'edit' ? pool[this.editAt++ % pool.length]! : pool[this.deleteAt++]!;
        const row = current.get(id);
        if (!row || row.deleted_at !== null) continue;
        const headers: Record<string, string> = { 'if-match': `"${row.revision}"` };
        if (kind === 'delete') {
          requests.push({ method: 'DELETE', path: `/api/v2/recordings/${id}`, headers });
        } else {
          // A fresh text beyond the corpus and the create bodies: every word of the old one goes.
          const transcript = this.corpus.recording(this.size + 100_000 + (this.texts++ % 5_000)).transcript;
          requests.push({ method: 'PATCH', path: `/api/v2/recordings/${id}`, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ transcript }) });
        }
      }
    } finally {
      conn.close();
    }
    const file = path.join(CACHE_DIR, `writes-${tag}-${kind}.json`);
    fs.writeFileSync(file, JSON.stringify(requests));
    return file;
  }
}

/** The scenario run.ts hands to its runner for one run of `kind` with a prepared request file. */
export const writeScenario = (kind: WriteKind, file: string): Scenario => ({
  name: kind,
  label: WRITE_LABELS[kind],
  target: 'server',
  spec: { mode: 'sequence', path: '/api/v2/recordings', file },
});

/**
 * Rounds of one-connection runs of each kind (the order alternating), through `run` (run.ts's
 * runner: the baseline stopped meanwhile, the load pinned to the other core). `seconds` per run.
 */
export async function measureWrites(opts: {
  db: string;
  size: number;
  /** Only recordings created before this (the seeded library) are edited or deleted. */
  before: number;
  /** Ids other scenarios read (get by id): never deleted. */
  idsFile: string;
  rounds: number;
  seconds: number;
  run: (s: Scenario, seconds: number, tag: string) => Promise<LoadResult>;
  log: (line: string) => void;
}): Promise<WriteResults> {
  const requests = new WriteRequests(opts.db, opts.size, opts.before, new Set(JSON.parse(fs.readFileSync(opts.idsFile, 'utf8')) as string[]));
  // Enough for a run at 2 ms per request (they take 10-100 ms); unused ones are never sent, and
  // running out shows as failures. Deletes take fresh recordings each run: the pool must last.
  const count = Math.max(500, opts.seconds * 500);
  const raw: Record<WriteKind, LoadResult[]> = { edit: [], delete: [] };
  const conn = openSqlite(opts.db, { readonly: true, fileMustExist: true });
  const structure = readFtsStructure(conn);
  conn.close();
  opts.log(`the search index before the edits and deletes: ${describeStructure(structure)}`);
  for (const kind of WRITE_KINDS) await opts.run(writeScenario(kind, requests.file(kind, 200, `warm`)), 1, `warm-${kind}`);
  for (let round = 0; round < opts.rounds; round++) {
    for (const kind of round % 2 ? [...WRITE_KINDS].reverse() : WRITE_KINDS) {
      const r = await opts.run(writeScenario(kind, requests.file(kind, count, `r${round}`)), opts.seconds, `writes-${round}-${kind}`);
      raw[kind].push(r);
      opts.log(`round ${round + 1}/${opts.rounds} 1 connection ${WRITE_LABELS[kind].padEnd(44)} ${String(r.rps).padStart(5)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  max ${r.max.toFixed(2)} ms  server ${r.serverCpu}%  iowait ${r.ioWaitOnServerCore}%`);
    }
  }
  const kinds = WRITE_KINDS.map((kind): WriteSummary => {
    const runs = raw[kind];
    const p99s = runs.map((r) => r.p99);
    return {
      kind,
      label: WRITE_LABELS[kind],
      rounds: runs.length,
      rps: Math.round(median(runs.map((r) => r.rps))),
      p50: round2(median(runs.map((r) => r.p50))),
      p99: round2(median(p99s)),
      p99Range: [round2(Math.min(...p99s)), round2(Math.max(...p99s))],
      max: round2(Math.max(...runs.map((r) => r.max))),
      requests: Math.round(median(runs.map((r) => r.requests))),
      failures: runs.reduce((n, r) => n + r.requests - (r.status['2xx'] ?? 0) + r.errors + r.timeouts, 0),
    };
  });
  return { seconds: opts.seconds, connections: 1, indexSegments: segmentCount(structure), kinds, raw };
}
