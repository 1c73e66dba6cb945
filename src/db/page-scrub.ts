// Zeroing what SQLite leaves behind in the unused middle of a b-tree page.
//
// secure_delete makes SQLite overwrite what it deletes, but not what it moves. When a page is
// rebuilt (a split, or cells shared out among neighbours when one fills or empties: rebuildPage()
// in btree.c) its cells are written afresh from the page's end, and the bytes between the new
// cell-pointer array and the new content area keep whatever the page held there before: copies of
// rows that now live elsewhere. Delete such a row later and secure_delete zeroes the live copy;
// the stale one stays in the file. A review found 31 of 4,000 deleted words still whole in a
// library of 3,000 recordings (in `recordings` and `recording_terms` leaves).
//
// That middle is "unallocated space" in SQLite's file format (https://sqlite.org/fileformat2.html,
// 1.6): nothing reads it, and any content there is valid. So these functions zero it in place with
// plain writes to the database file, touching no byte SQLite uses. A page is written so only
// while nothing else can write it: Scrub (below, run by the checkpointer thread) holds the write
// lock, so no commit adds frames, and a page with a frame not yet copied into the file (past the
// WAL index's nBackfill, which SQLite raises only after a checkpoint has copied) is left for later,
// so no checkpoint writes a scrubbed page meanwhile. The stale copies in other connections' page
// caches are dropped when Scrub then commits (a connection that sees the WAL changed starts its
// cache afresh). Files whose pages cannot be told apart by their first byte (auto_vacuum's
// pointer maps, 2^24 pages and more) are left alone: pageGeometry().
import fs from 'node:fs';
import os from 'node:os';
import type { WalPosition } from './checkpoint-policy';
import type { openSqlite } from './sqlite';
import { readSettledIndex } from './wal-index';

/** A connection as the checkpointer thread opens one. */
type Connection = ReturnType<typeof openSqlite>;

/** b-tree page types (the first byte of a page's header). */
const INTERIOR_INDEX = 2;
const INTERIOR_TABLE = 5;
const LEAF_INDEX = 10;
const LEAF_TABLE = 13;
/** Page 1 starts with the 100-byte database header. */
const FILE_HEADER_BYTES = 100;

/**
 * The unallocated range [start, end) of a b-tree page, or undefined when `page` is not one (an
 * overflow page, a freelist page, the lock-byte page) or its header does not hold together. A
 * page that is not a b-tree page but looks like one would need its first bytes to be a b-tree
 * type and four consistent offsets; an overflow or freelist trunk page starts with a page number,
 * whose first byte is 0 in any file under 256 GB (at reclib's 16 KB pages; 64 GB at 4 KB), so the type check alone tells
 * them apart there, and the header checks cover the rest.
 */
export function unallocatedRange(page: Buffer, pageno: number, usableSize: number): { start: number; end: number } | undefined {
  const hdr = pageno === 1 ? FILE_HEADER_BYTES : 0;
  const type = page[hdr];
  if (type !== INTERIOR_INDEX && type !== INTERIOR_TABLE && type !== LEAF_INDEX && type !== LEAF_TABLE) return undefined;
  const headerSize = type === LEAF_INDEX || type === LEAF_TABLE ? 8 : 12;
  const firstFreeblock = page.readUInt16BE(hdr + 1);
  const cells = page.readUInt16BE(hdr + 3);
  const contentStart = page.readUInt16BE(hdr + 5) || 65536;
  const fragmented = page[hdr + 7]!;
  const start = hdr + headerSize + 2 * cells;
  if (start > contentStart || contentStart > usableSize || fragmented > 60) return undefined;
  if (firstFreeblock !== 0 && (firstFreeblock < contentStart || firstFreeblock + 4 > usableSize)) return undefined;
  return { start, end: contentStart };
}

/** Zeroes `page`'s unallocated range if anything is written there; the range if it did. `zeros`: a zeroed buffer as large as the page. */
function scrubPage(page: Buffer, pageno: number, usableSize: number, zeros: Buffer): { start: number; end: number } | undefined {
  const range = unallocatedRange(page, pageno, usableSize);
  if (!range) return undefined;
  const { start, end } = range;
  if (page.compare(zeros, 0, end - start, start, end) === 0) return undefined;
  page.fill(0, start, end);
  return range;
}

/** Page numbers from here on: an overflow or freelist trunk page's first byte (of a page number) may then look like a b-tree page's type. */
const UNAMBIGUOUS_PAGES = 2 ** 24;

/**
 * The page size and usable size (page size less the reserved bytes) from a database file's
 * header, and whether pages can be told apart by their first byte: not in an auto_vacuum file
 * (its pointer-map entries start with 5 or 2, the types of interior b-tree pages; reclib never
 * turns it on, but a user's shell could, while the server runs: read again at every slice), nor
 * in one of 2^24 pages or more (256 GB at reclib's 16 KB pages). Such files are not scrubbed.
 */
export function pageGeometry(fd: number): { pageSize: number; usableSize: number; pageCount: number; scrubbable: boolean } | undefined {
  const header = Buffer.alloc(FILE_HEADER_BYTES);
  if (fs.readSync(fd, header, 0, FILE_HEADER_BYTES, 0) < FILE_HEADER_BYTES) return undefined;
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const pageCount = Math.floor(fs.fstatSync(fd).size / pageSize);
  const autoVacuum = header.readUInt32BE(52) !== 0;
  return { pageSize, usableSize: pageSize - header[20]!, pageCount, scrubbable: !autoVacuum && pageCount < UNAMBIGUOUS_PAGES };
}

/**
 * Scrubs the given pages of the database file open as `fd` (read and write); how many it changed.
 * Pages past the file's end are skipped (a page number read from an old WAL frame, say), and so
 * is the lock-byte page SQLite never uses. Only the unallocated range of a page is written.
 */
export function scrubPages(fd: number, pages: Iterable<number>): number {
  const geometry = pageGeometry(fd);
  if (!geometry?.scrubbable) return 0;
  const { pageSize, usableSize, pageCount } = geometry;
  const lockBytePage = Math.floor(0x40000000 / pageSize) + 1;
  const page = Buffer.alloc(pageSize);
  const zeros = Buffer.alloc(pageSize);
  let changed = 0;
  for (const pageno of pages) {
    if (pageno < 1 || pageno > pageCount || pageno === lockBytePage) continue;
    const at = (pageno - 1) * pageSize;
    if (fs.readSync(fd, page, 0, pageSize, at) < pageSize) continue;
    const range = scrubPage(page, pageno, usableSize, zeros);
    if (!range) continue;
    fs.writeSync(fd, page, range.start, range.end - range.start, at + range.start);
    changed++;
  }
  return changed;
}

/**
 * A read-write descriptor of the database file, one per thread that opens it, never closed: closing any
 * descriptor of a file drops every POSIX lock the process holds on it, SQLite's own included
 * (wal-index.ts says the same of the -shm file).
 */
const databaseDescriptors = new Map<string, number>();
function databaseDescriptor(realFile: string): number {
  let fd = databaseDescriptors.get(realFile);
  if (fd === undefined) {
    fd = fs.openSync(realFile, 'r+');
    databaseDescriptors.set(realFile, fd);
  }
  return fd;
}

/**
 * A database file as it stood when a run's last scrub left every page clean (src/db/scrub-mark.ts):
 * which file, its size, and when it was last written (ns; the change time cannot be set by hand).
 * A file with the same stamp at the next start was not written since, so that start needs no
 * whole-file pass. Strings, so that it crosses threads and JSON as it is.
 */
export interface FileStamp {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

/** The stamp of the file open as `fd`, or of the file at `file`. */
export function fileStamp(file: number | string): FileStamp {
  const st = typeof file === 'number' ? fs.fstatSync(file, { bigint: true }) : fs.statSync(file, { bigint: true });
  return { dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) };
}

/** A file a run's last scrub left clean: its stamp then, and when a whole-file pass last went through it (ms since the epoch). */
export interface ScrubbedFile {
  stamp: FileStamp;
  wholePassAt: number;
}

export const sameStamp = (a: FileStamp, b: FileStamp): boolean =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

/** The WAL file's header, and each frame's: https://sqlite.org/fileformat2.html#walformat. */
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
/** The size of a WAL file cut back to one frame: what an erasure leaves (the commit that made the WAL start over, of page 1). */
export const walOfOneFrame = (pageSize: number): number => WAL_HEADER_BYTES + FRAME_HEADER_BYTES + pageSize;
/** Where the salts are in a frame header. */
const FRAME_SALT_AT = 8;
/** The WAL index (-shm) header: two copies of 48 bytes (wal-index.ts reads them), then the checkpoint's nBackfill (native byte order). */
const INDEX_MX_FRAME_AT = 16;
const INDEX_SALT_AT = 32;
const INDEX_BACKFILL_AT = 96;

/** A set of page numbers as a bitmap that grows with the file. */
class PageSet {
  private bits = new Uint32Array(1024);
  size = 0;
  /** Where the next take() starts looking, so that a slice that stops early does not starve later pages. */
  private from = 0;

  add(pageno: number): void {
    const word = pageno >>> 5;
    if (word >= this.bits.length) {
      const grown = new Uint32Array(Math.max(word + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    const bit = 1 << (pageno & 31);
    if ((this.bits[word]! & bit) === 0) {
      this.bits[word]! |= bit;
      this.size++;
    }
  }

  /** Takes out up to `n` page numbers, leaving those `keep` says must wait. */
  take(n: number, keep: Set<number>): number[] {
    const out: number[] = [];
    const words = this.bits.length;
    for (let k = 0; k < words && out.length < n; k++) {
      const word = (this.from + k) % words;
      let v = this.bits[word]!;
      while (v !== 0 && out.length < n) {
        const low = v & -v;
        v ^= low;
        const pageno = word * 32 + 31 - Math.clz32(low);
        if (keep.has(pageno)) continue;
        this.bits[word]! &= ~low;
        this.size--;
        out.push(pageno);
      }
      this.from = word;
    }
    return out;
  }
}

/** Where the WAL stands, from its index: frames committed, frames copied to the database file, its salts (raw bytes). */
interface WalState {
  mxFrame: number;
  backfilled: number;
  salt: Buffer;
}

/**
 * Finds the pages whose unallocated space may hold stale copies, and scrubs them a slice at a
 * time. Only pages SQLite rewrote can have gained stale bytes, and every page SQLite rewrites
 * passes through the WAL as a frame; so the pages to scrub are those named by the WAL's frames
 * (collect(), read before they are copied into the database file and the WAL starts over), and,
 * once after a start (what earlier runs rewrote, and what the server's close copied without a
 * look), every page of the file, unless the last run's stop left it clean and nothing wrote it
 * since (open()'s `clean`, src/db/scrub-mark.ts). The checkpointer thread collects before each of its checkpoints and
 * whenever it sees the WAL move, and frames committed between that and the checkpoint right after
 * it (checkpointed()), before the WAL can start over. Another connection's
 * checkpoint (the server's backstop at ~200 MB of WAL, Litestream, a shell) may copy frames and let
 * the WAL start over before they were collected: what is left of that generation past the new
 * one's frames is read then, and when some of it may be gone (overwritten, the file truncated, a
 * whole generation unseen) the whole file is gone through again.
 */
export class PageScrubber {
  private readonly pending = new PageSet();
  /** The next page of a whole-file pass, or 0 when none is under way; and whether another is due after it. */
  private wholeFrom = 1;
  private wholeAgain = false;
  /** The WAL generation (its salts) whose frames were collected, and how many. */
  private salt: Buffer = Buffer.alloc(8);
  private collected = 0;
  /** The page of each collected frame of that generation (frame i at i - 1). */
  private framePages: number[] = [];
  /** The end of that generation this thread's own checkpoint copied completely, with every frame collected. */
  private ownEnd = -1;
  /** Whether a generation was seen yet (the first one needs no explaining: the whole-file pass covers it). */
  private known = false;
  /** The WAL file's largest size seen since this thread last cut it back: smaller means another connection truncated it. */
  private walLargest = 0;
  private wal: number | undefined;
  private readonly index = Buffer.alloc(INDEX_BACKFILL_AT + 4);
  private readonly frameHeader = Buffer.alloc(FRAME_HEADER_BYTES);
  /** Whole-file passes asked for since start because frames were missed (tests and reports). */
  missed = 0;
  /** When a whole-file pass last went through the file (ms since the epoch): this run's, or the one a skipped pass's note names. */
  wholePassAt: number | undefined;

  private constructor(
    /** The database file's real path: SQLite resolves symlinks, and its WAL is beside the real file. */
    private readonly file: string,
    private readonly db: number,
    private readonly shm: number,
    /** The database's page size (fixed for the life of a WAL database). */
    private readonly pageSize: number,
  ) {}

  /**
   * A scrubber for `file`, or undefined where the WAL index cannot be read or the file cannot be
   * scrubbed. It starts with a whole-file pass, unless the file still has the stamp `clean` that
   * the last run's stop left it with (every page scrubbed then): then what changed since is all
   * in the WAL, whose frames it collects at once. The stamp is compared after that collect, so a
   * checkpoint that copied frames of an earlier generation first has changed it.
   */
  static open(file: string, shm: number | undefined, clean?: ScrubbedFile): PageScrubber | undefined {
    if (shm === undefined) return undefined;
    const real = fs.realpathSync(file);
    const db = databaseDescriptor(real);
    const geometry = pageGeometry(db);
    if (!geometry?.scrubbable) return undefined;
    const scrubber = new PageScrubber(real, db, shm, geometry.pageSize);
    if (clean && scrubber.collect() && sameStamp(fileStamp(db), clean.stamp)) {
      scrubber.wholeFrom = 0;
      scrubber.wholePassAt = clean.wholePassAt;
    }
    return scrubber;
  }

  /** Pages left of a whole-file pass under way (0: none). */
  private get wholeLeft(): number {
    if (this.wholeFrom === 0) return 0;
    return Math.max(0, Math.floor(fs.fstatSync(this.db).size / this.pageSize) - this.wholeFrom + 1);
  }

  /** Pages left to scrub (those named by frames, and the rest of a whole-file pass). */
  get backlog(): number {
    return this.pending.size + this.wholeLeft;
  }

  /** Scrub every page again: a whole-file pass from page 1, after the one under way if any (so that the file's end is reached). */
  scrubAll(): void {
    if (this.wholeFrom === 0) this.wholeFrom = 1;
    else this.wholeAgain = true;
  }

  /** The WAL index's header, read until both copies agree (SQLite writes them one after the other). */
  private walState(): WalState | undefined {
    if (!readSettledIndex(this.shm, this.index)) return undefined;
    const u32 = (at: number) => (os.endianness() === 'LE' ? this.index.readUInt32LE(at) : this.index.readUInt32BE(at));
    return { mxFrame: u32(INDEX_MX_FRAME_AT), backfilled: u32(INDEX_BACKFILL_AT), salt: Buffer.from(this.index.subarray(INDEX_SALT_AT, INDEX_SALT_AT + 8)) };
  }

  private walFd(): number | undefined {
    if (this.wal === undefined) {
      try {
        this.wal = fs.openSync(`${this.file}-wal`, 'r');
      } catch {
        return undefined;
      }
    }
    return this.wal;
  }

  private walFileSize(): number {
    const fd = this.walFd();
    return fd === undefined ? 0 : fs.fstatSync(fd).size;
  }

  /** The page number of frame `i` (from 1) if it belongs to the generation with `salt`. */
  private framePage(i: number, salt: Buffer): number | undefined {
    const fd = this.walFd();
    if (fd === undefined) return undefined;
    const at = WAL_HEADER_BYTES + (i - 1) * (this.pageSize + FRAME_HEADER_BYTES);
    try {
      if (fs.readSync(fd, this.frameHeader, 0, FRAME_HEADER_BYTES, at) < FRAME_HEADER_BYTES) return undefined;
    } catch {
      return undefined; // an I/O error: the frame counts as missed, and the whole file is scrubbed
    }
    if (this.frameHeader.compare(salt, 0, 8, FRAME_SALT_AT, FRAME_SALT_AT + 8) !== 0) return undefined;
    return this.frameHeader.readUInt32BE(0);
  }

  /**
   * Adds the pages of the WAL's frames not collected yet. Called before every checkpoint this
   * thread runs, whenever it sees the WAL move, and while holding the write lock before a slice.
   */
  collect(): WalState | undefined {
    const state = this.walState();
    if (!state) return undefined;
    const walSize = this.walFileSize();
    if (!state.salt.equals(this.salt)) {
      // The WAL started over. The first salt goes up by one each time: more than one means a
      // whole generation came and went unseen. After one, what is left of the old generation is
      // read (collectRestOf). When that cannot tell where it ended, it is taken to have ended
      // where this thread's own complete checkpoint left it, if there was one: the WAL starts
      // over on its own after such a checkpoint. Otherwise another connection copied frames this
      // thread may not have seen, and the whole file is gone through again.
      if (this.known) {
        const startsOver = (state.salt.readUInt32BE(0) - this.salt.readUInt32BE(0)) >>> 0;
        const rest = startsOver === 1 ? this.collectRestOf(this.salt, state.salt, walSize) : 'lost';
        if (rest === 'lost' || (rest === 'unknown' && this.ownEnd !== this.collected)) this.missedFrames();
      }
      this.known = true;
      this.salt = state.salt;
      this.collected = 0;
      this.framePages = [];
      this.ownEnd = -1;
    }
    this.walLargest = Math.max(this.walLargest, walSize);
    return this.collectTo(state.mxFrame) ? state : undefined;
  }

  /**
   * Collects what is left of an old generation past the frames collected: its frames carry its
   * salts, and the first frame that does not is where it ended ('complete'), if the new
   * generation has not written that far. If the file is smaller than it was, it was truncated
   * ('lost'). If the new generation has written that far, an old frame past the new one's frames
   * shows that the old generation went on and some of it was overwritten ('lost'); none leaves
   * it 'unknown' (it ended where the collected frames end, or all it had past them is overwritten).
   */
  private collectRestOf(salt: Buffer, newSalt: Buffer, walSize: number): 'complete' | 'unknown' | 'lost' {
    const collectFrom = (from: number): number => {
      let i = from;
      for (let pageno = this.framePage(i, salt); pageno !== undefined; pageno = this.framePage(++i, salt)) this.pending.add(pageno);
      return i;
    };
    const end = collectFrom(this.collected + 1);
    const now = this.walState();
    if (!now?.salt.equals(newSalt) || walSize < this.walLargest) return 'lost';
    if (now.mxFrame < end) return 'complete';
    return collectFrom(now.mxFrame + 1) > now.mxFrame + 1 ? 'lost' : 'unknown';
  }

  /** Collects frames up to `end` of the current generation; false (and a whole-file pass) if some are gone. */
  private collectTo(end: number): boolean {
    for (let i = this.collected + 1; i <= end; i++) {
      const pageno = this.framePage(i, this.salt);
      if (pageno === undefined) {
        this.missedFrames();
        return false;
      }
      this.pending.add(pageno);
      this.framePages[i - 1] = pageno;
      this.collected = i;
    }
    return true;
  }

  private missedFrames(): void {
    this.missed++;
    this.scrubAll();
  }

  /**
   * After this thread's checkpoint: frames committed between collect() and the checkpoint were
   * copied too; they are collected now (still in the WAL: it starts over only after this returns,
   * at the next write). A complete checkpoint with every frame collected marks where the
   * generation may end without anything missed.
   */
  checkpointed(r: { log: number; checkpointed: number }): void {
    if (r.log <= 0) return;
    // If a writer has made the WAL start over meanwhile, the frames still carrying the old salts
    // are read all the same; one already overwritten counts as missed.
    if (!this.collectTo(r.log)) return;
    if (r.checkpointed === r.log) this.ownEnd = r.log;
  }

  /**
   * Scrubs up to `budget` pages: those named by frames first, then (if `whole`) the next of a
   * whole-file pass. The caller holds the write lock (so no commit adds frames) and commits
   * afterwards (so other connections drop their cached copies); pages with frames not yet copied
   * into the database file are left for later, since a checkpoint may write them at any moment.
   * How many pages were changed, or undefined if the WAL could not be read.
   */
  slice(budget: number, whole: boolean): number | undefined {
    const state = this.collect();
    if (!state) return undefined;
    const uncopied = new Set<number>();
    for (let i = state.backfilled + 1; i <= state.mxFrame; i++) {
      const pageno = this.framePages[i - 1] ?? this.framePage(i, state.salt);
      if (pageno === undefined) return undefined;
      uncopied.add(pageno);
    }
    const pages = this.pending.take(budget, uncopied);
    if (whole && this.wholeFrom !== 0 && pages.length < budget) {
      const pageCount = Math.floor(fs.fstatSync(this.db).size / this.pageSize);
      const end = Math.min(pageCount, this.wholeFrom + (budget - pages.length) - 1);
      for (let p = this.wholeFrom; p <= end; p++) {
        if (uncopied.has(p)) this.pending.add(p);
        else pages.push(p);
      }
      this.wholeFrom = end < pageCount ? end + 1 : this.wholeAgain ? 1 : 0;
      if (this.wholeFrom === 0) this.wholePassAt = Date.now();
      if (end >= pageCount) this.wholeAgain = false;
    }
    // Page 1 is left alone: it holds the database header and the schema (never a recording's
    // text), and the caller's commit writes it from its own cache anyway. Not synced here, under
    // the write lock: the zeros are in the file for every reader at once, and reach the disk with
    // the next checkpoint's sync of the database file (or the kernel's write-back).
    return scrubPages(this.db, pages.filter((p) => p !== 1));
  }

  /** The generation ends here by this thread's own doing (it is about to make the WAL start over with everything copied and collected). */
  endsHere(): void {
    this.ownEnd = this.collected;
    this.endedSalt1 = this.salt.readUInt32BE(0);
  }

  /** The first salt (big-endian) of the generation endsHere() last ended. */
  private endedSalt1: number | undefined;

  /**
   * The WAL right after the commit that made it start over at endsHere(): the one frame of that
   * commit, in the very next generation (walRestartHdr in sqlite3.c raises the first salt by one),
   * with the salts read big-endian as settledWalPosition() reads them; undefined if another
   * connection has committed, checkpointed or started the WAL over since.
   */
  afterCut(): WalPosition | undefined {
    const state = this.walState();
    if (!state || this.endedSalt1 === undefined || state.mxFrame !== 1) return undefined;
    const salt1 = state.salt.readUInt32BE(0);
    return salt1 === ((this.endedSalt1 + 1) >>> 0) ? { frames: 1, salt1, salt2: state.salt.readUInt32BE(4) } : undefined;
  }

  /** This thread's commit may have cut the WAL file back: its size from now on is the one to compare with. */
  cutBack(): void {
    this.walLargest = this.walFileSize();
  }

  /** Closes what it opened but the database's descriptor, which stays open for the process (see databaseDescriptor). */
  close(): void {
    if (this.wal !== undefined) fs.closeSync(this.wal);
    this.wal = undefined;
  }
}

/**
 * Bytes of pages a slice reads, and how often one runs. Slices run while the writers are quiet:
 * the pages named by frames, then the whole-file pass (over a library of 1,000,000 recordings,
 * 2.9 GB, ~90 s of quiet). Each slice holds the write lock (~1 ms a MB with the pages in the OS's
 * cache) and, if it changed a page, resets every other connection's page cache (below). While
 * writes keep coming, only the erasure's cut after a delete scrubs, a busy-sized slice: slices
 * every second in a stream of deletes at 1M took deletes' p99 from 46-52 to 54-60 ms and edits'
 * from 42-49 to 47-56 (two alternating runs of each, `--only writes`).
 */
const SCRUB_BUSY_BYTES = 1024 * 1024;
const SCRUB_QUIET_BYTES = 8 * 1024 * 1024;
const SCRUB_QUIET_EVERY_MS = 200;
/**
 * At a stop, the pages named by frames and what is left of a whole-file pass are scrubbed in one
 * go, up to this many bytes: ~30 ms with the pages in the OS's cache (those named by frames were
 * written lately), under 2 s from an SD card's ~20 MB/s; docker stop leaves the close ~2.5 s.
 * Anything more is left to the next start's whole-file pass.
 */
const SCRUB_FINAL_BYTES = 32 * 1024 * 1024;

/**
 * The SQL side of scrubbing (PageScrubber does the file side): a second connection, `locker`,
 * takes the write lock around each slice, so that no commit adds frames meanwhile (and
 * PageScrubber.slice() skips pages with frames not yet copied, which a checkpoint may write), and
 * then commits a change of nothing (user_version set to itself), so that
 * every other connection sees the WAL changed and drops the pages it had cached, stale bytes
 * included: a writer that kept a stale copy of a scrubbed page would write it back with its next
 * change of that page.
 *
 * It also cuts the WAL back for an erasure, in place of a TRUNCATE checkpoint: that checkpoint
 * copies frames committed after the last collect() and then empties the WAL, so they could never
 * be collected. Instead, with the write lock held, the frames are collected and all copied
 * (PASSIVE); then a transaction begun on a WAL with every frame copied makes it start over at its
 * commit, and `journal_size_limit = 0` cuts the file to that commit's one frame.
 */
export class Scrub {
  private readonly pageSize: number;
  private lastSliceAt = -Infinity;

  constructor(
    readonly scrubber: PageScrubber,
    private readonly locker: Connection,
    private readonly db: Connection,
    waitMs: number,
    private readonly walSize: () => number,
  ) {
    locker.pragma(`busy_timeout = ${waitMs}`);
    locker.pragma('journal_size_limit = -1');
    // Its commits never checkpoint: only the checkpointer's passes do, after a collect().
    locker.pragma('wal_autocheckpoint = 0');
    this.pageSize = locker.pragma('page_size', { simple: true }) as number;
  }

  /** Whether a slice is due at this pass (`now`: a monotonic time in ms): at quiet passes, spaced out, while pages are left. */
  due(quiet: boolean, now: number): boolean {
    return quiet && now - this.lastSliceAt >= SCRUB_QUIET_EVERY_MS && this.scrubber.backlog > 0;
  }

  figures(): { scrubBacklog: number; scrubMissed: number } {
    return { scrubBacklog: this.scrubber.backlog, scrubMissed: this.scrubber.missed };
  }

  /** Runs `fn` holding the write lock; undefined if the lock could not be had within waitMs. A transaction `fn` left open is committed (nothing in it was written through SQLite), or rolled back if `fn` threw. */
  private underWriteLock<T>(fn: () => T): T | undefined {
    try {
      this.locker.exec('BEGIN IMMEDIATE');
    } catch {
      return undefined;
    }
    let result: T;
    try {
      result = fn();
    } catch (e) {
      if (this.locker.inTransaction) this.locker.exec('ROLLBACK');
      throw e;
    }
    if (this.locker.inTransaction) this.locker.exec('COMMIT');
    return result;
  }

  /** A commit of nothing: the WAL changes, so other connections drop their cached pages. */
  private touch(): void {
    this.locker.pragma(`user_version = ${this.locker.pragma('user_version', { simple: true }) as number}`);
  }

  /** The touch, committed with the WAL's size limit set for it (the limit applies only if the commit makes the WAL start over). */
  private commitTouch(sizeLimit: number): void {
    this.locker.pragma(`journal_size_limit = ${sizeLimit}`);
    try {
      this.touch();
      this.locker.exec('COMMIT');
    } finally {
      this.locker.pragma('journal_size_limit = -1');
      this.scrubber.cutBack();
    }
  }

  /**
   * One slice, at a quiet pass: pages named by frames, then the next of the whole-file pass;
   * whether it ran. If every frame was copied, its commit makes the WAL start over and cuts the
   * file back to that commit's one frame (as an erasure does).
   */
  slice(now: number): boolean {
    this.lastSliceAt = now;
    try {
      return (
        this.underWriteLock(() => {
          const changed = this.scrubber.slice(SCRUB_QUIET_BYTES / this.pageSize, true);
          if (changed) this.commitTouch(0);
          return changed !== undefined;
        }) ?? false
      );
    } catch {
      // A transient I/O error (rolled back): the pages taken are gone through again with the whole file.
      this.scrubber.scrubAll();
      return false;
    }
  }

  /**
   * The erasure's cut of the WAL (see above), with a slice on the way (`budget`: its bytes, and
   * whether it goes on with the whole-file pass; by default by `quiet`); whether the WAL is now cut back.
   */
  truncate(quiet: boolean, now: number, budget = quiet ? { bytes: SCRUB_QUIET_BYTES, whole: true } : { bytes: SCRUB_BUSY_BYTES, whole: false }): boolean {
    this.lastSliceAt = now;
    try {
      const copied = this.underWriteLock(() => {
        this.scrubber.collect();
        const r = (this.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!;
        this.scrubber.checkpointed(r);
        return r.checkpointed === r.log;
      });
      // A reader of an older snapshot holds frames back: tried again later.
      if (!copied) return false;
      return (
        this.underWriteLock(() => {
          const state = this.scrubber.collect();
          // A writer came in between the two locks: its frames are not copied yet.
          if (!state || state.backfilled !== state.mxFrame) return false;
          this.scrubber.slice(budget.bytes / this.pageSize, budget.whole);
          this.scrubber.endsHere();
          this.commitTouch(0);
          // Not cut back if a reader was using the WAL at the commit: it did not start over.
          return this.walSize() <= walOfOneFrame(this.pageSize);
        }) ?? false
      );
    } catch {
      // A transient I/O error (rolled back): tried again later, and the pages a slice had taken
      // are gone through again with the whole file.
      this.scrubber.scrubAll();
      return false;
    }
  }

  /**
   * A run's last scrub, once the writers have closed (the checkpointer's 'finish'): the erasure's
   * cut, with every page named by frames scrubbed, then what is left of a whole-file pass if it
   * all fits, up to SCRUB_FINAL_BYTES in all. When every page of the file is now clean (the cut
   * made, nothing left) and nothing came after the cut's commit: the WAL's position then
   * (afterCut()), which the server's close checks and records for the next start
   * (src/db/scrub-mark.ts).
   */
  finish(): WalPosition | undefined {
    // A whole-file pass is gone on with only if what is left of it fits: a part of it would be read in vain.
    const whole = this.scrubber.backlog * this.pageSize <= SCRUB_FINAL_BYTES;
    try {
      // A WAL without a frame (none written since it was made) would not start over at the cut's
      // commit but take new random salts, which afterCut() could not tell from another
      // connection's start-over: a commit of nothing gives it a frame first.
      this.underWriteLock(() => {
        if (this.scrubber.collect()?.mxFrame === 0) this.touch();
      });
    } catch {
      return undefined;
    }
    if (!this.truncate(true, performance.now(), { bytes: SCRUB_FINAL_BYTES, whole }) || this.scrubber.backlog !== 0) return undefined;
    return this.scrubber.afterCut();
  }

  close(): void {
    this.locker.close();
    this.scrubber.close();
  }
}
