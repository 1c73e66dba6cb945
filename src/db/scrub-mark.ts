// FILE.scrubbed: a note, beside the database file, that the last `reclib serve` on it stopped with
// every page scrubbed (src/db/page-scrub.ts), with the file's stamp then (which file, its size,
// when it was last written) and when a whole-file pass last went through it. The next start takes
// the note (it vouches for that one start only) and passes it to its checkpointer thread, which
// skips its whole-file pass if the file still has that stamp: at 1M recordings that pass reads
// 2.9 GB after every start, which on a small host's disk takes minutes and pushes the library's
// hot pages out of the OS's cache. Once a week the pass runs all the same (WHOLE_PASS_EVERY_MS),
// for what a run might have missed without knowing it (page-scrub.ts, collectRestOf).
//
// A stop leaves the note only when (closeNoting):
// - the checkpointer's last pass, after the writer thread closed its connection, cut the WAL back
//   to the one frame of its own commit, in the next generation, with every page scrubbed
//   (PageScrubber.afterCut);
// - nothing committed after that pass up to the server's own TRUNCATE checkpoint (the WAL index
//   still shows that frame and its salts, and the connection's data_version has not moved), and
//   the TRUNCATE made the WAL start over exactly once;
// - the close then removed the WAL (nobody else had the file open) and left the file as it was;
// - the note is written in a later tick of the kernel's file clock than the file's last write.
// A stop that is not clean, but leaves the file exactly as the note it took (a start stopped before
// its writer thread did anything), leaves that note again. Anything that writes the file later
// (the CLI, a shell, a restore, a copy over it) changes its stamp, and the next start goes through
// the whole file, as it does without a note or with one that is missing, malformed or a week old.
// What a stamp cannot tell: a write to the file right after the TRUNCATE's, within the same tick
// of the file clock (another process's commit in the microseconds before the close, which the
// close then copies).
import fs from 'node:fs';
import { writeFileAtomic } from '../files/private-files';
import type { Db } from './open';
import { fileStamp, sameStamp, type ScrubbedFile } from './page-scrub';
import { openWalIndex, settledWalPosition } from './wal-index';
import type { WalPosition } from './checkpoint-policy';
import type { CleanEnd } from './checkpointer-worker';

/** A whole-file pass at least this often, notes or not. */
export const WHOLE_PASS_EVERY_MS = 7 * 24 * 3600 * 1000;

/** The real file of database `db` (a symlinked --db names its target, and SQLite's -wal is beside that). */
function realFile(db: string): string | undefined {
  try {
    return fs.realpathSync(db);
  } catch {
    return undefined;
  }
}

/** Writes the note for `real` (the real file). Never throws: a note not written costs a whole-file pass. */
function writeNote(real: string, scrubbed: ScrubbedFile): boolean {
  try {
    const note = { note: 'reclib serve stopped with every page of this database scrubbed; its next start reads this and removes it', ...scrubbed };
    writeFileAtomic(`${real}.scrubbed`, `${JSON.stringify(note)}\n`, { overwrite: true, durable: false });
    return true;
  } catch {
    return false;
  }
}

/** Whether `real` has no WAL beside it and still has `stamp`. */
const unchanged = (real: string, stamp: ScrubbedFile['stamp']): boolean => {
  try {
    return !fs.existsSync(`${real}-wal`) && sameStamp(fileStamp(real), stamp);
  } catch {
    return false;
  }
};

/**
 * Notes database `db`, closed and every page of it scrubbed just now by the caller (a whole-file
 * pass at `wholePassAt`), as a clean stop does: for a copy scrubbed by hand (the bench). False (and
 * no note) if its WAL is there. Never throws.
 */
export function markScrubbed(db: string, wholePassAt = Date.now()): boolean {
  const real = realFile(db);
  if (real === undefined || fs.existsSync(`${real}-wal`)) return false;
  try {
    return writeNote(real, { stamp: fileStamp(real), wholePassAt });
  } catch {
    return false;
  }
}

/** Takes (reads and removes) the note of database `db`: what it vouches for, if anything. Never throws. */
export function takeScrubMark(db: string, now = Date.now()): ScrubbedFile | undefined {
  const real = realFile(db);
  if (real === undefined) return undefined;
  const file = `${real}.scrubbed`;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Not removable: then not trusted either (a later start would read it again).
    return undefined;
  }
  try {
    const { stamp, wholePassAt } = JSON.parse(text) as { stamp?: Record<string, unknown>; wholePassAt?: unknown };
    const keys: Array<keyof ScrubbedFile['stamp']> = ['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs'];
    if (!stamp || !keys.every((k) => typeof stamp[k] === 'string' && /^\d+$/.test(stamp[k] as string))) return undefined;
    if (typeof wholePassAt !== 'number' || !(Math.abs(now - wholePassAt) <= WHOLE_PASS_EVERY_MS)) return undefined;
    return { stamp: Object.fromEntries(keys.map((k) => [k, stamp[k]])) as unknown as ScrubbedFile['stamp'], wholePassAt };
  } catch {
    return undefined;
  }
}

/** The same WAL position (frames and both salts). */
const samePosition = (a: WalPosition, b: WalPosition): boolean => a.frames === b.frames && a.salt1 === b.salt1 && a.salt2 === b.salt2;

/** Longer than a tick of the kernel's file clock (a jiffy: 10 ms at HZ=100) with some margin. */
const FILE_CLOCK_TICK_MS = 12;

/** Blocks for `ms` (a stop's last few milliseconds; nothing else runs by then). */
const sleepSync = (ms: number) => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Writes the note of a file stamped at its last write, once the file clock has moved past that
 * write's tick, and keeps it only if the note's own time is later and the file is still as
 * stamped: any later write to the file then has a later time than the stamp. The kernel's file
 * clock ticks every few milliseconds at worst on Linux (FAT's is 2 s: there the note is dropped).
 */
function noteAfterItsTick(real: string, scrubbed: ScrubbedFile): void {
  const lastWriteMs = Number(BigInt(scrubbed.stamp.mtimeNs) / 1_000_000n);
  const wait = lastWriteMs + FILE_CLOCK_TICK_MS - Date.now();
  if (wait > 0) sleepSync(Math.min(wait, FILE_CLOCK_TICK_MS));
  if (!writeNote(real, scrubbed)) return;
  try {
    if (fs.statSync(`${real}.scrubbed`, { bigint: true }).mtimeNs > BigInt(scrubbed.stamp.mtimeNs) && unchanged(real, scrubbed.stamp)) return;
  } catch {
    // Unreadable: dropped.
  }
  fs.rmSync(`${real}.scrubbed`, { force: true });
}

/**
 * The server's close of its connection `db` to database `file` (the last one of the process):
 * the WAL copied into the file and emptied (TRUNCATE), then closed; with the note for the next
 * start when `end` (the checkpointer's clean last pass) still holds (see the top), or when the
 * file is still exactly as the note the start took (`taken`) said.
 */
export function closeNoting(db: Db, file: string, end: CleanEnd | undefined, taken: ScrubbedFile | undefined): void {
  const real = end || taken ? realFile(file) : undefined;
  const shm = end && real ? openWalIndex(real) : undefined;
  const at = () => (shm === undefined ? undefined : settledWalPosition(shm));
  // Commits of other connections this one has seen (it starts a read of its own).
  const dataVersion = () => db.pragma('data_version', { simple: true }) as number;
  let clean = false;
  let stamp: ScrubbedFile['stamp'] | undefined;
  try {
    let version: number | undefined;
    if (end && shm !== undefined) {
      version = dataVersion();
      // Nothing committed since the last pass: the WAL still holds its one frame.
      const before = at();
      clean = before !== undefined && samePosition(before, end.wal);
    }
    // The WAL's content goes into the database file and the WAL starts over empty, so the file
    // alone is the whole library (a copy taken now needs no -wal beside it). Busy (another
    // process, e.g. the CLI, reads or writes), it says so after busy_timeout: closing then
    // checkpoints what it can.
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (clean) {
      // Everything copied and the WAL started over exactly once, by this TRUNCATE (salt1 + 1);
      // and no other connection committed between the look above and the TRUNCATE, which would
      // have copied that commit unseen (this connection's data_version would have moved).
      const after = at();
      clean = r?.busy === 0 && after?.frames === 0 && after.salt1 === ((end!.wal.salt1 + 1) >>> 0) && dataVersion() === version;
    }
    if (clean) stamp = fileStamp(real!);
  } catch {
    clean = false;
  }
  db.close();
  if (clean && stamp && unchanged(real!, stamp)) noteAfterItsTick(real!, { stamp, wholePassAt: end!.wholePassAt });
  else if (taken && unchanged(real!, taken.stamp)) writeNote(real!, taken);
}
