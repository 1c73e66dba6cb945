// FILE.scrubbed: a note, beside the database file, that the last `reclib serve` on it stopped with
// every page scrubbed (src/db/page-scrub.ts), and the file's stamp then (which file, its size, when
// it was last written). The next start takes the note (it vouches for that one start only) and
// passes the stamp to its checkpointer thread, which skips the whole-file pass if the file still
// has it: at 1M recordings that pass reads 2.9 GB after every start, which on a small host's disk
// takes minutes and pushes the library's hot pages out of the OS's cache.
//
// A stop leaves the note only when its checkpointer's last pass, after the writer closed, cut the
// WAL back with every page scrubbed, and the server's own close then removed the WAL (nobody else
// had the file open). Anything that writes the file later (the CLI, a shell, a restore, a copy
// over it) changes its stamp, and the next start goes through the whole file as before; so does
// a note that is missing, unreadable or malformed. The one case a stamp cannot tell: a write by
// another process within the few milliseconds between the close and the stamp (the kernel's file
// times are that coarse).
import fs from 'node:fs';
import { writeFileAtomic } from '../files/private-files';
import { fileStamp, type FileStamp } from './page-scrub';

/** The real file of database `db` (a symlinked --db names its target, and SQLite's -wal is beside that). */
function realFile(db: string): string | undefined {
  try {
    return fs.realpathSync(db);
  } catch {
    return undefined;
  }
}

/** Records that database `db`, closed, has every page scrubbed; false (and no note) if its WAL is still there. Never throws: a note not written costs a whole-file pass. */
export function markScrubbed(db: string): boolean {
  const real = realFile(db);
  if (real === undefined || fs.existsSync(`${real}-wal`)) return false;
  try {
    const stamp = fileStamp(real);
    writeFileAtomic(`${real}.scrubbed`, `${JSON.stringify({ note: 'reclib serve stopped with every page of this database scrubbed; its next start reads this and removes it', stamp })}\n`, { overwrite: true, durable: false });
    return true;
  } catch {
    return false;
  }
}

/** Takes (reads and removes) the note of database `db`: the stamp it vouches for, if any. Never throws. */
export function takeScrubMark(db: string): FileStamp | undefined {
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
    const stamp = (JSON.parse(text) as { stamp?: Record<string, unknown> }).stamp;
    const keys: Array<keyof FileStamp> = ['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs'];
    if (!stamp || !keys.every((k) => typeof stamp[k] === 'string' && /^\d+$/.test(stamp[k] as string))) return undefined;
    return Object.fromEntries(keys.map((k) => [k, stamp[k]])) as unknown as FileStamp;
  } catch {
    return undefined;
  }
}
