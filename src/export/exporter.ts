// `reclib export` (docs/decisions.md §11): an account's live recordings as files a person can read without
// reclib. Idempotent: a rerun rewrites only the notes that changed and removes the notes of
// recordings deleted since, and only files an export wrote (a note starts with reclib's front
// matter and its own id; recordings.jsonl holds recording JSON); nothing else in DIR is touched.
// Memory stays flat at 1M recordings: recordings are read a page at a time, and removal walks the
// folders asking the database about each note, instead of holding a set of every id.
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ID_PATTERN } from '../ids';
import { createPrivateFile, makePrivateDir, pathProblem, syncDirectory, writeFileAtomic } from '../files/private-files';
import { writeAllSync } from '../files/write-all';
import { recordingJson } from '../services/recording-model';
import type { RecordingExportStore } from '../store/recording-export-store';
import { noteStart, notePath, recordingMarkdown } from './markdown';

export type ExportFormat = 'markdown' | 'json';

export interface ExportResult {
  exported: number;
  removed: number;
}

export interface ExportOptions {
  accountId: string;
  dir: string;
  format: ExportFormat;
  /** Called after each recording: how many are done out of how many live ones there were at the start. */
  onProgress?: (done: number, total: number) => void;
}

export class ExportError extends Error {}

export const JSONL_FILE = 'recordings.jsonl';

export function exportRecordings(store: RecordingExportStore, opts: ExportOptions): ExportResult {
  const dir = path.resolve(opts.dir);
  if (fs.existsSync(dir)) {
    if (!fs.statSync(dir).isDirectory()) throw new ExportError(`export folder ${dir} is a file, not a folder`);
  } else {
    // Says what is wrong with the way there ("parent … is a file", "folder … is not writable").
    const problem = pathProblem(dir);
    if (problem) throw new ExportError(`export folder ${dir}: ${problem}`);
  }
  makePrivateDir(dir);
  const total = store.count(opts.accountId);
  const progress = (done: number) => opts.onProgress?.(done, Math.max(total, done));
  return opts.format === 'json' ? exportJsonl(store, opts.accountId, dir, progress) : exportMarkdown(store, opts.accountId, dir, progress);
}

function exportMarkdown(store: RecordingExportStore, accountId: string, dir: string, progress: (done: number) => void): ExportResult {
  let exported = 0;
  let madeDir = '';
  for (const row of store.live(accountId)) {
    const file = path.join(dir, notePath(row));
    const folder = path.dirname(file);
    if (folder !== madeDir) {
      makePrivateDir(folder);
      madeDir = folder;
    }
    const content = recordingMarkdown(row);
    const existing = readIfExists(file);
    if (existing !== content) {
      if (existing !== undefined && !existing.startsWith(noteStart(row.id))) {
        throw new ExportError(`${file} exists and was not written by reclib export; move it away and export again`);
      }
      writeFileAtomic(file, content, { overwrite: true, durable: false });
    }
    progress(++exported);
  }
  return { exported, removed: removeStaleNotes(store, accountId, dir) };
}

/** Removes notes (only reclib's) whose recording is no longer live; empty month and year folders go too. */
function removeStaleNotes(store: RecordingExportStore, accountId: string, dir: string): number {
  let removed = 0;
  for (const year of subfolders(dir, /^\d{4}$/)) {
    let removedInYear = false;
    for (const month of subfolders(year, /^\d{2}$/)) {
      let removedHere = false;
      for (const name of fs.readdirSync(month)) {
        if (leftBehind(name, NOTE_TEMP)) {
          fs.rmSync(path.join(month, name), { force: true });
          continue;
        }
        const id = name.endsWith('.md') ? name.slice(0, -3) : '';
        if (!ID_PATTERN.test(id)) continue;
        const file = path.join(month, name);
        const rel = path.relative(dir, file).split(path.sep).join('/');
        const row = store.liveById(accountId, id);
        if (row && notePath(row) === rel) continue;
        if (!startsWith(file, noteStart(id))) continue; // not a note an export wrote
        fs.rmSync(file);
        removed++;
        removedHere = true;
      }
      if (removedHere) removeIfEmpty(month);
      removedInYear ||= removedHere;
    }
    if (removedInYear) removeIfEmpty(year);
  }
  return removed;
}

/** A note's temporary file (writeFileAtomic: NAME.<pid>.<hex>.tmp) and the JSONL's (NAME.<pid>.tmp). */
const NOTE_TEMP = /^rec_[A-Za-z0-9]+\.md\.(\d+)\.[0-9a-f]+\.tmp$/;
const JSONL_TEMP = new RegExp(`^${JSONL_FILE.replace('.', '\\.')}\\.(\\d+)\\.tmp$`);

/** A temporary file an export killed halfway left behind: its process is gone (a running one's is kept). */
function leftBehind(name: string, pattern: RegExp): boolean {
  const pid = Number(pattern.exec(name)?.[1] ?? NaN);
  if (!Number.isInteger(pid) || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function exportJsonl(store: RecordingExportStore, accountId: string, dir: string, progress: (done: number) => void): ExportResult {
  const file = path.join(dir, JSONL_FILE);
  for (const name of fs.readdirSync(dir)) if (leftBehind(name, JSONL_TEMP)) fs.rmSync(path.join(dir, name), { force: true });
  let removed = 0;
  if (fs.existsSync(file)) {
    for (const line of lines(file)) {
      const id = exportedId(line);
      if (id === undefined) throw new ExportError(`${file} exists and is not a reclib export (a line without a recording id); move it away and export again`);
      if (!store.liveById(accountId, id)) removed++;
    }
  }
  const temp = `${file}.${process.pid}.tmp`;
  fs.rmSync(temp, { force: true });
  const fd = createPrivateFile(temp);
  let exported = 0;
  try {
    let chunk: string[] = [];
    let size = 0;
    for (const row of store.live(accountId)) {
      const line = JSON.stringify(recordingJson(row)) + '\n';
      chunk.push(line);
      size += line.length;
      if (size >= 1 << 20) {
        writeAllSync(fd, Buffer.from(chunk.join('')), file);
        chunk = [];
        size = 0;
      }
      progress(++exported);
    }
    writeAllSync(fd, Buffer.from(chunk.join('')), file);
    fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw e;
  }
  fs.closeSync(fd);
  fs.renameSync(temp, file);
  syncDirectory(dir);
  return { exported, removed };
}

function exportedId(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as { id?: unknown; recordedAt?: unknown };
    return typeof value.id === 'string' && typeof value.recordedAt === 'number' ? value.id : undefined;
  } catch {
    return undefined;
  }
}

/** The lines of a file, read 1 MB at a time. */
function* lines(file: string): Generator<string> {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    const decoder = new StringDecoder('utf8'); // a character split between two reads stays whole
    let rest = '';
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const parts = (rest + decoder.write(buf.subarray(0, n))).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) yield p;
    }
    if (rest.trim()) yield rest;
  } finally {
    fs.closeSync(fd);
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function startsWith(file: string, prefix: string): boolean {
  const want = Buffer.from(prefix);
  const fd = fs.openSync(file, 'r');
  try {
    const got = Buffer.alloc(want.length);
    return fs.readSync(fd, got, 0, want.length, 0) === want.length && got.equals(want);
  } finally {
    fs.closeSync(fd);
  }
}

function subfolders(dir: string, name: RegExp): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && name.test(e.name))
    .map((e) => path.join(dir, e.name));
}

function removeIfEmpty(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // not empty (or not ours to remove): stays
  }
}
