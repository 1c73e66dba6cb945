// The seeded corpus database, cached under bench/.cache/ (gitignored) and keyed by corpus size,
// generator version and a hash of schema.sql, so a schema change never benchmarks a stale file.
// A seed is written under a .partial name and renamed when complete: an interrupted seed is
// never reused.
import fs from 'node:fs';
import path from 'node:path';
import { pageGeometry, scrubPages } from '../src/db/page-scrub';
import { markScrubbed } from '../src/db/scrub-mark';
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

/**
 * One benchmark at a time on this checkout: `npm run bench` and `bench:create-ab` pin the same two
 * cores and share the run copies under bench/.cache/run/, so a second run would measure the first
 * and delete its copy under it (a run's cleanup removes run-<size>.db). Takes bench/.cache/bench.lock
 * (the holder's pid) for this process's life; a lock whose process is gone is taken over.
 */
export function holdBenchLock(): void {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const file = path.join(CACHE_DIR, 'bench.lock');
  // Written whole under another name, then linked into place: a reader never sees it half-written.
  const mine = `${file}.${process.pid}`;
  fs.writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        fs.linkSync(mine, file);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw e;
      }
      let holder: number;
      try {
        holder = Number(fs.readFileSync(file, 'utf8'));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        throw e;
      }
      if (!Number.isInteger(holder) || holder <= 0 || alive(holder)) {
        throw new Error(
          `another benchmark (${holder > 0 ? `pid ${holder}` : 'its pid unreadable'}) is running on this checkout: two at once share the cores and the run copies (${path.relative(ROOT, file)}; remove it if no benchmark runs)`,
        );
      }
      fs.rmSync(file, { force: true }); // left by a run that was killed
    }
  } finally {
    fs.rmSync(mine, { force: true });
  }
  process.once('exit', () => {
    try {
      if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.rmSync(file, { force: true });
    } catch {
      // already gone
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
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
