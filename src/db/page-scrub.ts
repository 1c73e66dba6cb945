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
// plain writes to the database file, touching no byte SQLite uses. They are safe only while nobody
// else writes the file: the caller (checkpointer-worker.ts) holds the write lock with an empty WAL,
// so no commit and no checkpoint can write a page meanwhile; and the stale copies in other
// connections' page caches are dropped when the caller then commits (a connection that sees the
// WAL changed starts its cache afresh).
import fs from 'node:fs';
import os from 'node:os';

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

/** Zeroes `page`'s unallocated range if anything is written there; whether it did. */
export function scrubPage(page: Buffer, pageno: number, usableSize: number): { start: number; end: number } | undefined {
  const range = unallocatedRange(page, pageno, usableSize);
  if (!range) return undefined;
  const { start, end } = range;
  for (let i = start; i < end; i++) {
    if (page[i] !== 0) {
      page.fill(0, start, end);
      return range;
    }
  }
  return undefined;
}

/** The page size and usable size (page size less the reserved bytes) from a database file's header. */
export function pageGeometry(fd: number): { pageSize: number; usableSize: number; pageCount: number } | undefined {
  const header = Buffer.alloc(FILE_HEADER_BYTES);
  if (fs.readSync(fd, header, 0, FILE_HEADER_BYTES, 0) < FILE_HEADER_BYTES) return undefined;
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  const size = fs.fstatSync(fd).size;
  return { pageSize, usableSize: pageSize - header[20]!, pageCount: Math.floor(size / pageSize) };
}

/**
 * Scrubs the given pages of the database file open as `fd` (read and write); how many it changed.
 * Pages past the file's end are skipped (a page number read from an old WAL frame, say), and so
 * is the lock-byte page SQLite never uses. Only the unallocated range of a page is written.
 */
export function scrubPages(fd: number, pages: Iterable<number>): number {
  const geometry = pageGeometry(fd);
  if (!geometry) return 0;
  const { pageSize, usableSize, pageCount } = geometry;
  const lockBytePage = Math.floor(0x40000000 / pageSize) + 1;
  const page = Buffer.alloc(pageSize);
  let changed = 0;
  for (const pageno of pages) {
    if (pageno < 1 || pageno > pageCount || pageno === lockBytePage) continue;
    const at = (pageno - 1) * pageSize;
    if (fs.readSync(fd, page, 0, pageSize, at) < pageSize) continue;
    const range = scrubPage(page, pageno, usableSize);
    if (!range) continue;
    fs.writeSync(fd, page, range.start, range.end - range.start, at + range.start);
    changed++;
  }
  return changed;
}

/** The WAL file's header, and each frame's: https://sqlite.org/fileformat2.html#walformat. */
const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
/** The size of a WAL file cut back to one frame: what an erasure leaves (the commit that made the WAL start over, of page 1). */
export const walOfOneFrame = (pageSize: number): number => WAL_HEADER_BYTES + FRAME_HEADER_BYTES + pageSize;
/** Where the salts are in the WAL header and in a frame header. */
const WAL_SALT_AT = 16;
const FRAME_SALT_AT = 8;
/** The WAL index (-shm) header: two copies of 48 bytes, then the checkpoint's nBackfill (native byte order). */
const INDEX_HEADER_BYTES = 48;
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
 * once at start (what earlier runs rewrote, and what the server's close copied without a look),
 * every page of the file. Run by the checkpointer thread, the only one that checkpoints: it
 * collects before each of its checkpoints, so a frame it copies was collected first. A checkpoint
 * by another connection (the server's backstop at ~200 MB of WAL, another process) may copy frames
 * and let the WAL start over before they were collected; collect() then sees a WAL that started
 * over at a point this thread's own checkpoints did not reach, and goes through the whole file.
 */
export class PageScrubber {
  private readonly pending = new PageSet();
  /** The next page of a whole-file pass, or 0 when none is under way. */
  private wholeFrom = 1;
  /** The WAL generation (its salts) whose frames were collected, and how many. */
  private salt: Buffer = Buffer.alloc(8);
  private collected = 0;
  /** The end of that generation this thread's own checkpoint copied completely, with every frame collected. */
  private ownEnd = -1;
  /** Whether a generation was seen yet (the first one needs no explaining: the whole-file pass covers it). */
  private known = false;
  private wal: number | undefined;
  private readonly index = Buffer.alloc(INDEX_BACKFILL_AT + 4);
  private readonly frameHeader = Buffer.alloc(FRAME_HEADER_BYTES);
  /** Whole-file passes begun since start because frames were missed (tests and reports). */
  missed = 0;

  private constructor(
    private readonly file: string,
    private readonly db: number,
    private readonly shm: number,
  ) {}

  /** A scrubber for `file`, or undefined where the WAL index cannot be read (then nothing is scrubbed). */
  static open(file: string, shm: number | undefined): PageScrubber | undefined {
    if (shm === undefined) return undefined;
    const db = fs.openSync(file, 'r+');
    const header = Buffer.alloc(FILE_HEADER_BYTES);
    fs.readSync(db, header, 0, FILE_HEADER_BYTES, 0);
    // auto_vacuum files have pointer-map pages, whose first byte can look like a b-tree page's
    // type; reclib's never are (the schema does not turn it on). Refused rather than guessed.
    if (header.readUInt32BE(52) !== 0) {
      fs.closeSync(db);
      return undefined;
    }
    return new PageScrubber(file, db, shm);
  }

  /** Pages left to scrub (those named by frames, and the rest of a whole-file pass). */
  get backlog(): number {
    const size = pageGeometry(this.db)?.pageCount ?? 0;
    return this.pending.size + (this.wholeFrom === 0 ? 0 : Math.max(0, size - this.wholeFrom + 1));
  }

  /** Scrub every page again (a whole-file pass from page 1). */
  scrubAll(): void {
    this.wholeFrom = 1;
  }

  /** The WAL index's header, read until both copies agree (SQLite writes them one after the other). */
  private walState(): WalState | undefined {
    for (let tries = 0; tries < 20; tries++) {
      try {
        if (fs.readSync(this.shm, this.index, 0, this.index.length, 0) < this.index.length) return undefined;
      } catch {
        return undefined;
      }
      if (this.index.compare(this.index, 0, INDEX_HEADER_BYTES, INDEX_HEADER_BYTES, 2 * INDEX_HEADER_BYTES) !== 0) continue;
      const u32 = (at: number) => (os.endianness() === 'LE' ? this.index.readUInt32LE(at) : this.index.readUInt32BE(at));
      return { mxFrame: u32(INDEX_MX_FRAME_AT), backfilled: u32(INDEX_BACKFILL_AT), salt: Buffer.from(this.index.subarray(INDEX_SALT_AT, INDEX_SALT_AT + 8)) };
    }
    return undefined;
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

  /** The page number of frame `i` (from 1) if it belongs to the generation with `salt`. */
  private framePage(i: number, salt: Buffer, pageSize: number): number | undefined {
    const fd = this.walFd();
    if (fd === undefined) return undefined;
    const at = WAL_HEADER_BYTES + (i - 1) * (pageSize + FRAME_HEADER_BYTES);
    if (fs.readSync(fd, this.frameHeader, 0, FRAME_HEADER_BYTES, at) < FRAME_HEADER_BYTES) return undefined;
    if (this.frameHeader.compare(salt, 0, 8, FRAME_SALT_AT, FRAME_SALT_AT + 8) !== 0) return undefined;
    return this.frameHeader.readUInt32BE(0);
  }

  /**
   * Adds the pages of the WAL's frames not collected yet. Call before every checkpoint this
   * thread runs, and while holding the write lock before a slice.
   */
  collect(): WalState | undefined {
    const state = this.walState();
    const geometry = pageGeometry(this.db);
    if (!state || !geometry) return state;
    if (!state.salt.equals(this.salt)) {
      // The WAL started over. If this thread's own checkpoint copied everything it had collected
      // of the old generation, that is how it could start over; otherwise another connection
      // copied frames this thread may never have seen.
      if (this.known && this.ownEnd !== this.collected) this.missedFrames();
      this.known = true;
      this.salt = state.salt;
      this.collected = 0;
      this.ownEnd = -1;
    }
    return this.collectTo(state.mxFrame, geometry.pageSize) ? state : undefined;
  }

  /** Collects frames up to `end` of the current generation; false (and a whole-file pass) if some are gone. */
  private collectTo(end: number, pageSize: number): boolean {
    for (let i = this.collected + 1; i <= end; i++) {
      const pageno = this.framePage(i, this.salt, pageSize);
      if (pageno === undefined) {
        this.missedFrames();
        return false;
      }
      this.pending.add(pageno);
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
    const geometry = pageGeometry(this.db);
    if (!geometry || r.log <= 0) return;
    // If a writer has made the WAL start over meanwhile, the frames still carrying the old salts
    // are read all the same; one already overwritten counts as missed.
    if (!this.collectTo(r.log, geometry.pageSize)) return;
    if (r.checkpointed === r.log) this.ownEnd = r.log;
  }

  /**
   * Scrubs up to `budget` pages: those named by frames first, then the next of a whole-file pass.
   * The caller holds the write lock (so no commit adds frames) and commits afterwards (so other
   * connections drop their cached copies); pages with frames not yet copied into the database
   * file are left for later, since a checkpoint may write them at any moment. How many pages
   * were changed, or undefined if the WAL could not be read.
   */
  slice(budget: number): number | undefined {
    const state = this.collect();
    const geometry = pageGeometry(this.db);
    if (!state || !geometry) return undefined;
    const uncopied = new Set<number>();
    for (let i = state.backfilled + 1; i <= state.mxFrame; i++) {
      const pageno = this.framePage(i, state.salt, geometry.pageSize);
      if (pageno !== undefined) uncopied.add(pageno);
      else return undefined;
    }
    const pages = this.pending.take(budget, uncopied);
    for (const pageno of uncopied) this.pending.add(pageno);
    if (this.wholeFrom !== 0 && pages.length < budget) {
      const end = Math.min(geometry.pageCount, this.wholeFrom + (budget - pages.length) - 1);
      for (let p = this.wholeFrom; p <= end; p++) {
        if (uncopied.has(p)) this.pending.add(p);
        else pages.push(p);
      }
      this.wholeFrom = end >= geometry.pageCount ? 0 : end + 1;
    }
    // Page 1 is left alone: it holds the database header and the schema (never a recording's
    // text), and the caller's commit writes it from its own cache anyway.
    const changed = scrubPages(this.db, pages.filter((p) => p !== 1));
    if (changed > 0) fs.fdatasyncSync(this.db);
    return changed;
  }

  /** The generation ends here by this thread's own doing (it is about to make the WAL start over with everything copied and collected). */
  endsHere(): void {
    this.ownEnd = this.collected;
  }

  close(): void {
    fs.closeSync(this.db);
    if (this.wal !== undefined) fs.closeSync(this.wal);
  }
}
