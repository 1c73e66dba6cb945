// Disk use of the seeded library (issue 14 point 4): bytes of the database file and its WAL, after
// a checkpoint, per byte of title + transcript, and where those bytes go (SQLite's dbstat: the
// pages of each table and index, the FTS index's shadow tables, and the free pages).
import fs from 'node:fs';
import { openSqlite } from '../src/db/sqlite';
import type { TargetCheck } from './stats';

export interface DiskUsage {
  /** The database file and its WAL after wal_checkpoint(TRUNCATE). */
  fileBytes: number;
  walBytes: number;
  /** UTF-8 bytes of every recording's title and transcript (tombstones have none). */
  textBytes: number;
  recordings: number;
  bytesPerTextByte: number;
  /** The largest b-trees and the free pages, largest first. */
  split: Array<{ name: string; bytes: number; perTextByte: number }>;
}

/** Required by issue 14 at 1,000,000 recordings. */
export const DISK_TARGET = 2.5;
const SPLIT_ROWS = 8;

export function measureDisk(file: string): DiskUsage {
  const db = openSqlite(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const text = db.prepare('SELECT count(*) AS n, coalesce(sum(octet_length(title) + octet_length(transcript)), 0) AS bytes FROM recordings').get() as { n: number; bytes: number };
    const pages = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as Array<{ name: string; bytes: number }>;
    const free = (db.pragma('freelist_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    const fileBytes = fs.statSync(file).size;
    const walBytes = fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
    const per = (bytes: number) => (text.bytes > 0 ? bytes / text.bytes : NaN);
    const split = [...pages.slice(0, SPLIT_ROWS), ...(free > 0 ? [{ name: '(free pages)', bytes: free }] : [])].map((p) => ({ ...p, perTextByte: per(p.bytes) }));
    return { fileBytes, walBytes, textBytes: text.bytes, recordings: text.n, bytesPerTextByte: per(fileBytes + walBytes), split };
  } finally {
    db.close();
  }
}

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MB`;

export function diskTarget(d: DiskUsage): TargetCheck {
  return {
    target: 'disk: bytes of database file + WAL (after a checkpoint) per byte of title + transcript',
    required: `≤ ${DISK_TARGET}`,
    measured: `${d.bytesPerTextByte.toFixed(2)} (${mb(d.fileBytes + d.walBytes)} for ${mb(d.textBytes)} of text)`,
    pass: d.bytesPerTextByte <= DISK_TARGET,
  };
}

/** One line: the total and the split. */
export function diskText(d: DiskUsage): string {
  const parts = d.split.map((p) => `${p.name} ${mb(p.bytes)} (${p.perTextByte.toFixed(2)})`).join(', ');
  return (
    `Disk (issue 14 point 4): the seeded library of ${d.recordings.toLocaleString('en-US')} recordings is ${mb(d.fileBytes)} + ${mb(d.walBytes)} of WAL after a checkpoint, ` +
    `${d.bytesPerTextByte.toFixed(2)} bytes per byte of title + transcript (${mb(d.textBytes)}). Largest parts, in bytes per byte of text: ${parts}.`
  );
}
