// The seeded corpus database, cached under bench/.cache/ (gitignored) and keyed by corpus size,
// generator version and a hash of schema.sql, so a schema change never benchmarks a stale file.
// A seed is written under a .partial name and renamed when complete: an interrupted seed is
// never reused.
import fs from 'node:fs';
import path from 'node:path';
import { pageGeometry, scrubPages } from '../src/db/page-scrub';
import { markScrubbed } from '../src/db/scrub-mark';
import { holdServeLock, ServeLockedError, type ServeLock } from '../src/db/serve-lock';
import { openSqlite } from '../src/db/sqlite';
import { GENERATOR_VERSION } from './corpus';
import { ROOT } from './processes';
import { schemaHash, seedCorpus, type SeedMeta } from './seed';

export const CACHE_DIR = path.join(ROOT, 'bench', '.cache');

export interface CachedCorpus {
  db: string;
  meta: SeedMeta;
  /** A uniform sample of recording ids (JSON array) for get-by-id. */
  idsFile: string;
  reused: boolean;
}

/** Kept for the process's life: a lock's connection that is collected lets go of the lock. */
let benchLock: ServeLock | undefined;

/**
 * One benchmark at a time on this checkout: `npm run bench` and `bench:create-ab` pin the same two
 * cores and share the run copies under bench/.cache/run/, so a second run would measure the first
 * and delete its copy under it (a run's cleanup removes run-<size>.db). Held for this process's
 * life with the server's own lock (src/db/serve-lock.ts, on bench/.cache/bench.serve-lock), which
 * the kernel drops however the process ends.
 */
export function holdBenchLock(): void {
  try {
    benchLock = holdServeLock(path.join(CACHE_DIR, 'bench'));
  } catch (e) {
    if (!(e instanceof ServeLockedError)) throw e;
    throw new Error('another benchmark is running on this checkout: two at once share the cores and the run copies');
  }
}

const removeDb = (file: string) => {
  for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(file + suffix, { force: true });
};

export async function ensureCorpus(size: number, reseed: boolean, log: (line: string) => void): Promise<CachedCorpus> {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const stem = `corpus-${size}-g${GENERATOR_VERSION}-s${schemaHash()}`;
  const db = path.join(CACHE_DIR, `${stem}.db`);
  const metaFile = path.join(CACHE_DIR, `${stem}.json`);
  const idsFile = path.join(CACHE_DIR, `${stem}.ids.json`);
  if (!reseed && fs.existsSync(db) && fs.existsSync(metaFile) && fs.existsSync(idsFile)) {
    return { db, meta: JSON.parse(fs.readFileSync(metaFile, 'utf8')) as SeedMeta, idsFile, reused: true };
  }
  // Older seeds of the same size (other generator or schema) only take disk space: drop them.
  for (const f of fs.readdirSync(CACHE_DIR)) {
    if (f.startsWith(`corpus-${size}-`) && !f.startsWith(stem)) fs.rmSync(path.join(CACHE_DIR, f), { force: true });
  }
  const partial = `${db}.partial`;
  removeDb(partial);
  log(`seeding ${size.toLocaleString('en-US')} recordings into ${path.relative(ROOT, db)} (cached for later runs)…`);
  const { meta, sampleIds } = await seedCorpus(size, partial, log);
  removeDb(db);
  fs.renameSync(partial, db);
  removeDb(partial);
  fs.writeFileSync(idsFile, JSON.stringify(sampleIds));
  fs.writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return { db, meta, idsFile, reused: false };
}

/** A fresh copy of the cached database for one run (the run writes to it). */
export function runCopy(corpus: CachedCorpus): string {
  // Someone may have opened the cached file since (a WAL appears): fold it in so the copy is whole.
  if (fs.existsSync(`${corpus.db}-wal`)) {
    const db = openSqlite(corpus.db);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  const dir = path.join(CACHE_DIR, 'run');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `run-${corpus.meta.size}.db`);
  removeDb(file);
  fs.copyFileSync(corpus.db, file);
  scrubOnce(file);
  // The copy leaves gigabytes of dirty pages (at 1M recordings) that the kernel writes back over the
  // next minute; every checkpoint's fsync of the run file would wait for that write-back and charge
  // it to whatever scenario is running. Flush it once here, before anything is measured: the copy
  // then stays in the OS cache, clean, as a long-running server's file would be.
  fsyncFile(file);
  return file;
}

/**
 * Makes a copy of the corpus a library as it is after its first start with page scrubbing
 * (src/db/page-scrub.ts): the seeding's page splits left stale bytes in ~30% of the pages, which
 * the server's start-up pass would zero during the first scenarios (resetting the caches with each
 * slice). Zeroed here, that pass only reads, as it does at every later start of a real server;
 * with the note a clean stop leaves (noteScrubbed), the start skips it, as after a clean stop.
 */
export function scrubOnce(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    scrubPages(fd, Array.from({ length: pageGeometry(fd)?.pageCount ?? 0 }, (_, i) => i + 1));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The run's file as a clean stop of a server leaves it (src/db/scrub-mark.ts): scrubbed again (the
 * pages written since scrubOnce) and noted, so that the server's start skips the whole-file pass.
 */
export function noteScrubbed(file: string): void {
  scrubOnce(file);
  if (!markScrubbed(file)) throw new Error(`could not note ${file} as scrubbed (is its WAL there?)`);
}

/** Flushes a file's dirty pages to disk. */
export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
