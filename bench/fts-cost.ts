// `npm run bench:fts -- --db FILE [--edits 60] [--optimize]`: where the time of an edit goes in the
// search index (issue 14 point 3, edits and deletes p99 ≤ 50 ms). Works on a COPY of FILE (e.g. a
// corpus in bench/.cache); prints the FTS5 segment structure, then edits N recordings picked at
// random the way the index sees an edit (FTS5 'delete' of the old text, one vocabulary lookup per
// removed word as SearchTerms.forget() does, the new text indexed, COMMIT with synchronous=FULL)
// and prints the spread of each part; --optimize merges the index into one segment first; --creates N
// adds a burst of creates before the edits, and --settle fold|usermerge then runs the idle merger's
// slices until nothing is left (with the fold of src/store/fts-structure.ts, or FTS5's usermerge alone).
//
// What it showed (2026-11-23, this 2-core VM): with secure-delete, an edit's cost is one seek per
// (segment, term): the 'delete' is applied at COMMIT (or at the first query of the transaction),
// where FTS5 looks each token and each 3-character prefix of the old text up in every segment,
// big or small, at ~30 µs each. The seeded 1M library has 26 segments: commit p50 91 ms and the
// vocabulary lookups 21 ms; after 'optimize' (27 s at 1M) 17.5 ms and 4.6 ms; after 20,000 more
// creates at 32 per transaction (11 small segments) back to 95 ms. Not a test: CI does not run it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openSqlite } from '../src/db/sqlite';
import { ftsQuote } from '../src/store/fts-quote';
import { RecordingStore } from '../src/store/recording-store';
import { SLICE_PAGES } from '../src/services/index-merger';
import { readFtsStructure, segmentCount } from '../src/store/fts-structure';
import { describeStructure } from './fts-structure';

const { values: opt } = parseArgs({
  options: { db: { type: 'string' }, edits: { type: 'string', default: '60' }, optimize: { type: 'boolean', default: false }, pgsz: { type: 'string' }, automerge: { type: 'string' }, crisismerge: { type: 'string' }, creates: { type: 'string', default: '0' }, settle: { type: 'string' } },
});
if (!opt.db) throw new Error('--db FILE is required (a reclib database; it is copied, never changed)');

const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(1);
  return `p50 ${q(0.5)}  p90 ${q(0.9)}  max ${q(1)} ms`;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-fts-cost-'));
const file = path.join(dir, 'copy.db');
try {
  const src = openSqlite(opt.db, { readonly: true, fileMustExist: true });
  await src.backup(file);
  src.close();
  const db = openSqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -16000'); // the writer connection's page cache (src/db/open.ts)
  // The server checkpoints on its own thread (src/db/checkpointer.ts); an autocheckpoint inside a
  // commit here would add ~50 ms to one edit in every ~1,000 pages of WAL.
  db.pragma('wal_autocheckpoint = 0');
  const walPages = () => { try { return fs.statSync(`${file}-wal`).size / (db.pragma('page_size', { simple: true }) as number); } catch { return 0; } };
  const show = (when: string) => console.log(`${when}: ${describeStructure(readFtsStructure(db))}`);
  show('structure');
  if (opt.automerge) db.exec(`INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', ${Number(opt.automerge)})`);
  if (opt.crisismerge) db.exec(`INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('crisismerge', ${Number(opt.crisismerge)})`);
  if (opt.pgsz) db.exec(`INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('pgsz', ${Number(opt.pgsz)})`);
  if (opt.optimize) {
    const t = performance.now();
    db.exec("INSERT INTO recordings_fts (recordings_fts) VALUES ('optimize')");
    console.log(`optimize: ${Math.round(performance.now() - t)} ms`);
    show('structure');
  }
  // A burst of creates first, 32 to a transaction, as the bench's create scenarios leave the index.
  const creates = Number(opt.creates);
  if (creates > 0) {
    const texts = db.prepare('SELECT title, transcript FROM recordings ORDER BY random() LIMIT 2000').all() as Array<{ title: string; transcript: string }>;
    let next = (db.prepare('SELECT max(seq) AS m FROM recordings').get() as { m: number }).m + 1_000_000;
    const add = db.prepare('INSERT INTO recordings_fts (rowid, title, transcript) VALUES (?, ?, ?)');
    const t = performance.now();
    for (let i = 0; i < creates; i += 32) {
      db.transaction(() => {
        for (let j = i; j < Math.min(creates, i + 32); j++) add.run(next++, texts[j % texts.length]!.title, texts[j % texts.length]!.transcript);
      })();
    }
    console.log(`${creates} creates (index only): ${Math.round(performance.now() - t)} ms`);
    show('structure');
  }
  // --settle fold|usermerge: the idle merger's slices until one finds nothing to do, as a server at
  // rest runs them (fold: RecordingStore.mergeSlice; usermerge: FTS5's 'merge' alone, the policy
  // before the fold).
  if (opt.settle) {
    if (opt.settle !== 'fold' && opt.settle !== 'usermerge') throw new Error('--settle is fold or usermerge');
    const store = new RecordingStore(db);
    const slice = opt.settle === 'fold' ? () => store.mergeSlice(SLICE_PAGES) : () => store.ftsMerge(SLICE_PAGES);
    const t = performance.now();
    let slices = 0;
    const longest: number[] = [];
    for (;;) {
      const s0 = performance.now();
      const worked = db.transaction(slice)();
      longest.push(performance.now() - s0);
      if (!worked) break;
      slices++;
      if (walPages() > 20_000) db.pragma('wal_checkpoint(TRUNCATE)');
    }
    console.log(`settled (${opt.settle}): ${slices} slices of ${SLICE_PAGES} pages in ${Math.round(performance.now() - t)} ms; a slice ${spread(longest)}`);
    show('structure');
  }
  const rows = db.prepare('SELECT seq, title, transcript FROM recordings WHERE deleted_at IS NULL ORDER BY random() LIMIT ?').all(Number(opt.edits)) as Array<{
    seq: number;
    title: string;
    transcript: string;
  }>;
  const remove = db.prepare("INSERT INTO recordings_fts (recordings_fts, rowid, title, transcript) VALUES ('delete', ?, ?, ?)");
  const index = db.prepare('INSERT INTO recordings_fts (rowid, title, transcript) VALUES (?, ?, ?)');
  const still = db.prepare('SELECT 1 FROM recordings_fts WHERE recordings_fts MATCH ? LIMIT 1');
  const words = (t: string) => new Set(t.toLowerCase().split(/[^\p{L}\p{N}\p{M}]+/u).filter((w) => w !== ''));
  const parts = {
    'vocabulary lookups, one per removed word': [] as number[],
    'index the new text': [] as number[],
    'commit (applies the delete: secure-delete; synchronous=FULL)': [] as number[],
  };
  const [lookups, insert, commit] = Object.values(parts);
  const terms: number[] = [];
  // Each edit's whole time, by what FTS5 did besides the edit: automerge work (the write counter
  // crossed a multiple of 64 leaf pages), a crisis merge (level 0 shrank without it), or nothing.
  const byKind: Record<string, number[]> = { all: [], 'no merge': [], automerge: [], 'crisis merge': [] };
  const l0: number[] = [];
  for (const r of rows) {
    const before = readFtsStructure(db);
    if (walPages() > 20_000) db.pragma('wal_checkpoint(TRUNCATE)');
    const wal0 = walPages();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    db.exec('BEGIN IMMEDIATE');
    remove.run(r.seq, r.title, r.transcript);
    let t = performance.now();
    const gone = words(`${r.title} ${r.transcript}`);
    terms.push(gone.size);
    for (const w of gone) still.get(ftsQuote(w));
    lookups!.push(performance.now() - t);
    t = performance.now();
    index.run(r.seq, r.title, r.transcript.split(' ').reverse().join(' ')); // other order: same words, new entries
    insert!.push(performance.now() - t);
    t = performance.now();
    db.exec('COMMIT');
    commit!.push(performance.now() - t);
    const total = performance.now() - t0;
    const after = readFtsStructure(db);
    const kind = Math.floor(after.writeCounter / 64) > Math.floor(before.writeCounter / 64) ? 'automerge' : segmentCount(after) <= segmentCount(before) ? 'crisis merge' : 'no merge';
    byKind.all!.push(total);
    byKind[kind]!.push(total);
    l0.push(before.levels[0]?.segments.length ?? 0);
    if (process.env.FTS_COST_DUMP) fs.appendFileSync(process.env.FTS_COST_DUMP, `${JSON.stringify({ total, terms: gone.size, segments: segmentCount(before), l0: l0.at(-1), kind, lookups: lookups!.at(-1), commit: commit!.at(-1), walPages: Math.round(walPages() - wal0), cpu: (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000 })}\n`);
  }
  console.log(`${rows.length} edits; distinct words per recording ${spread(terms).replace(/ ms$/, '')}`);
  for (const [name, xs] of Object.entries(parts)) console.log(`  ${name}: ${spread(xs)}`);
  const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))]!.toFixed(1);
  for (const [name, xs] of Object.entries(byKind)) if (xs.length) console.log(`  whole edit, ${name} (${xs.length}): ${spread(xs)}  p99 ${p99(xs)} ms`);
  console.log(`  level-0 segments before an edit: ${spread(l0).replace(/ ms$/, '')}`);
  show('structure after');
  const bytes = db.prepare('SELECT sum(length(block)) AS b, count(*) AS n FROM recordings_fts_data').get() as { b: number; n: number };
  console.log(`index: ${(bytes.b / 1e6).toFixed(1)} MB in ${bytes.n} blocks`);
  db.close();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
