// docs/decisions.md §11: `reclib export --account ID --to DIR [--format markdown|json]`. Markdown: one note
// per live recording at DIR/YYYY/MM/<id>.md, YAML front matter then summary and transcript; json:
// DIR/recordings.jsonl, a v2 recording a line. A rerun updates changed notes and removes those of
// deleted recordings, and never touches a file it did not write. Files 0600, folders 0700.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { exportRecordings } from '../../src/export/exporter';
import { yamlString } from '../../src/export/markdown';
import { RecordingExportStore } from '../../src/store/recording-export-store';
import { BUNDLE, cleanEnv, ensureBundle, ROOT, runCli } from '../helpers/bundle';
import { harness, type Harness } from '../helpers/harness';
import { created, get, patch, remove } from '../helpers/recording-client';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-export-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => fs.mkdtempSync(path.join(root, `${++n}-`));

const MARCH = Date.UTC(2025, 2, 14, 9, 30);
const DECEMBER = Date.UTC(2024, 11, 31, 23, 59);

async function library(): Promise<{ h: Harness; token: string; db: string; ids: { march: string; december: string; plain: string } }> {
  const db = path.join(fresh(), 'reclib.db');
  const h = harness({ db });
  const token = h.key();
  const march = await created(h, token, { type: 'memo', title: 'Groceries: "milk", yes', summary: 'Buy things.', transcript: 'todo: milk\nand eggs', recordedAt: MARCH });
  // A device's captures carry its id (set by device sessions; written directly here).
  h.services.core.db.prepare('UPDATE recordings SET device_id = ? WHERE id = ?').run('ring-1', march.id);
  const december = await created(h, token, { type: 'clip', title: '', transcript: 'new year', recordedAt: DECEMBER });
  const plain = await created(h, token, { type: 'clip', transcript: 'third', recordedAt: MARCH + 1000 });
  return { h, token, db, ids: { march: march.id, december: december.id, plain: plain.id } };
}

const run = (h: Harness, dir: string, format: 'markdown' | 'json' = 'markdown') =>
  exportRecordings(new RecordingExportStore(h.services.core.db), { accountId: h.accountId, dir, format });

describe('reclib export --format markdown', () => {
  it('writes DIR/YYYY/MM/<id>.md per live recording: YAML front matter, then summary and transcript', async () => {
    const { h, ids } = await library();
    const dir = path.join(fresh(), 'notes');
    assert.deepEqual(run(h, dir), { exported: 3, removed: 0 });
    const note = fs.readFileSync(path.join(dir, '2025', '03', `${ids.march}.md`), 'utf8');
    const rec = (await get(h, h.key(), ids.march)).json.recording;
    assert.equal(
      note,
      [
        '---',
        `id: "${ids.march}"`,
        'type: memo',
        'title: "Groceries: \\"milk\\", yes"',
        'recordedAt: 2025-03-14T09:30:00.000Z',
        `updatedAt: ${new Date(rec.updatedAt).toISOString()}`,
        'deviceId: "ring-1"',
        'pinned: false',
        'status: ready',
        '---',
        '',
        '# Groceries: "milk", yes',
        '',
        '## Summary',
        '',
        'Buy things.',
        '',
        '## Transcript',
        '',
        'todo: milk\nand eggs',
        '',
      ].join('\n'),
    );
    assert.ok(fs.existsSync(path.join(dir, '2024', '12', `${ids.december}.md`)), 'month by the capture time in UTC');
    assert.match(fs.readFileSync(path.join(dir, '2024', '12', `${ids.december}.md`), 'utf8'), /\ndeviceId: null\n/);
  });

  it('a rerun rewrites changed notes only, removes notes of deleted recordings, and leaves files it did not write', async () => {
    const { h, token, ids } = await library();
    const dir = fresh();
    run(h, dir);
    const mine = path.join(dir, '2025', '03', 'my-own-note.md');
    const lookalike = path.join(dir, '2025', '03', 'rec_notreclibs.md');
    fs.writeFileSync(mine, 'my thoughts');
    fs.writeFileSync(lookalike, '---\ntitle: written by me\n---\n');
    fs.writeFileSync(path.join(dir, 'README.txt'), 'vault');
    const untouched = path.join(dir, '2025', '03', `${ids.plain}.md`);
    const mtime = fs.statSync(untouched).mtimeMs;

    assert.equal((await patch(h, token, ids.march, { title: 'Groceries (done)', pinned: true }, '"1"')).status, 200);
    assert.equal((await remove(h, token, ids.december, '"1"')).status, 204);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(run(h, dir), { exported: 2, removed: 1 });

    const note = fs.readFileSync(path.join(dir, '2025', '03', `${ids.march}.md`), 'utf8');
    assert.match(note, /\ntitle: "Groceries \(done\)"\n/);
    assert.match(note, /\npinned: true\n/);
    assert.equal(fs.existsSync(path.join(dir, '2024')), false, 'the deleted note and its emptied folders are gone');
    assert.equal(fs.statSync(untouched).mtimeMs, mtime, 'an unchanged note is not rewritten');
    assert.equal(fs.readFileSync(mine, 'utf8'), 'my thoughts');
    assert.equal(fs.readFileSync(lookalike, 'utf8'), '---\ntitle: written by me\n---\n', 'a file named like a note but not written by reclib stays');
    assert.equal(fs.readFileSync(path.join(dir, 'README.txt'), 'utf8'), 'vault');
    assert.deepEqual(run(h, dir), { exported: 2, removed: 0 }, 'a third run finds nothing to do');
  });

  it('files are 0600 and the folders it creates 0700, whatever the umask', async () => {
    const { h, ids } = await library();
    const dir = path.join(fresh(), 'a', 'b');
    const old = process.umask(0);
    try {
      run(h, dir);
    } finally {
      process.umask(old);
    }
    const m = (p: string) => fs.statSync(p).mode & 0o777;
    assert.deepEqual(
      [m(path.dirname(dir)), m(dir), m(path.join(dir, '2025')), m(path.join(dir, '2025', '03')), m(path.join(dir, '2025', '03', `${ids.march}.md`))],
      [0o700, 0o700, 0o700, 0o700, 0o600],
    );
  });
});

describe('reclib export --format json', () => {
  it('writes DIR/recordings.jsonl, a v2 recording a line; a rerun drops deleted ones and counts them', async () => {
    const { h, token, ids } = await library();
    const dir = fresh();
    assert.deepEqual(run(h, dir, 'json'), { exported: 3, removed: 0 });
    const file = path.join(dir, 'recordings.jsonl');
    const lines = () => fs.readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { id: string });
    const march = (await get(h, token, ids.march)).json.recording;
    assert.deepEqual(lines().find((r) => r.id === ids.march), march, 'exactly the v2 recording');
    assert.deepEqual(lines().map((r) => r.id).sort(), Object.values(ids).sort());
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal((await remove(h, token, ids.plain, '"1"')).status, 204);
    assert.deepEqual(run(h, dir, 'json'), { exported: 2, removed: 1 });
    assert.deepEqual(lines().map((r) => r.id).sort(), [ids.march, ids.december].sort());
  });
});

describe('temporary files of an export killed halfway', () => {
  it('are removed by the next export (those of a process still running are left)', async () => {
    const { h } = await library();
    const dir = fresh();
    run(h, dir, 'markdown');
    run(h, dir, 'json');
    // A pid that was and is no more: a child that has exited.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const month = path.join(dir, '2025', '03');
    const note = fs.readdirSync(month).find((f) => f.endsWith('.md'))!;
    const leftovers = [path.join(month, `${note}.${gone}.a1b2c3d4e5f6.tmp`), path.join(dir, `recordings.jsonl.${gone}.tmp`)];
    // Another export still running (this test's parent stands in for it), and this process's own.
    const running = [path.join(month, `${note}.${process.ppid}.a1b2c3d4e5f6.tmp`), path.join(dir, `recordings.jsonl.${process.ppid}.tmp`)];
    for (const f of [...leftovers, ...running]) fs.writeFileSync(f, 'half');
    run(h, dir, 'markdown');
    run(h, dir, 'json');
    for (const f of leftovers) assert.equal(fs.existsSync(f), false, `${path.basename(f)} is removed`);
    for (const f of running) assert.equal(fs.existsSync(f), true, `${path.basename(f)} is kept`);
  });
});

describe('reclib export from the CLI', () => {
  it('--json prints {"exported","removed"}; no progress bar when stderr is not a terminal', async () => {
    const { h, db } = await library();
    const dir = fresh();
    const r = await runCli(['export', '--db', db, '--account', h.accountId, '--to', dir, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { exported: 3, removed: 0 });
    assert.equal(r.stderr, '');
    const text = await runCli(['export', '--db', db, '--account', h.accountId, '--to', dir, '--format', 'json']);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stderr, '', 'not a terminal: nothing extra');
    assert.match(text.stdout, /^exported 3 recordings to /);
    fs.writeFileSync(path.join(dir, 'a-file'), '');
    const blocked = await runCli(['export', '--db', db, '--account', h.accountId, '--to', path.join(dir, 'a-file', 'notes'), '--json']);
    assert.equal(blocked.code, 1);
    assert.deepEqual(JSON.parse(blocked.stderr).error, {
      code: 'export_failed',
      message: `export folder ${path.join(dir, 'a-file', 'notes')}: parent ${path.join(dir, 'a-file')} is a file, not a folder`,
    });
    const bad = await runCli(['export', '--db', db, '--account', h.accountId, '--to', dir, '--format', 'pdf', '--json']);
    assert.equal(bad.code, 2, 'an unknown format is a usage error');
    assert.equal(JSON.parse(bad.stderr).error.code, 'usage');
  });
});

describe('the progress bar', () => {
  // `script` runs the command on a pseudo-terminal, as a person at a terminal would.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it('is drawn on stderr when it is a terminal, and not with --json', { skip: !hasScript && 'script(1) not installed' }, async () => {
    const { h, db } = await library();
    ensureBundle();
    const onTerminal = (extra: string) => {
      const command = [process.execPath, BUNDLE, 'export', '--db', db, '--account', h.accountId, '--to', fresh(), extra].filter(Boolean).join(' ');
      const r = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: cleanEnv(), encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      return r.stdout;
    };
    assert.match(onTerminal(''), /\rexporting \[#{30}\] 3\/3/);
    const json = onTerminal('--json');
    assert.doesNotMatch(json, /exporting/);
    assert.deepEqual(JSON.parse(json.trim()), { exported: 3, removed: 0 });
  });
});

describe('the store reads recordings a page at a time', () => {
  it('live() with a page of 2 yields every live recording once, newest first', async () => {
    const { h, ids } = await library();
    const store = new RecordingExportStore(h.services.core.db);
    assert.deepEqual([...store.live(h.accountId, 2)].map((r) => r.id), [ids.plain, ids.march, ids.december]);
  });
});

describe('YAML strings', () => {
  it('are double-quoted with JSON escapes, and YAML line breaks (NEL, U+2028/2029) escaped too', () => {
    assert.equal(yamlString('yes'), '"yes"');
    assert.equal(yamlString('a: "b"\n#c'), '"a: \\"b\\"\\n#c"');
    assert.equal(yamlString('x\u0085y\u2028z'), '"x\\u0085y\\u2028z"');
  });
});

describe('reclib export when the disk fills up', () => {
  // A file size limit (ulimit -f, in 512-byte blocks) behaves as a nearly full disk does: the write
  // that reaches it writes what fits and returns a short count without an error, the next one fails
  // (EFBIG here, ENOSPC on a full disk). No mount needed. Node ignores SIGXFSZ, so the write fails
  // instead of the process being killed.
  const LIMIT = 64 * 1024;
  const exportWithLimit = (db: string, h: Harness, dir: string, format: 'markdown' | 'json') => {
    ensureBundle();
    const command = `ulimit -f ${LIMIT / 512} && exec "$0" "$@"`;
    const r = spawnSync('sh', ['-c', command, process.execPath, BUNDLE, 'export', '--db', db, '--account', h.accountId, '--to', dir, '--format', format, '--json'], {
      cwd: ROOT,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const temps = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.tmp'));

  it('json: a write that does not fit fails the export (exit 1, naming the file) and the last good recordings.jsonl stays', async () => {
    const { h, token, db } = await library();
    const dir = fresh();
    const file = path.join(dir, 'recordings.jsonl');
    assert.deepEqual(run(h, dir, 'json'), { exported: 3, removed: 0 });
    const good = fs.readFileSync(file, 'utf8');
    // Now more than the limit, in one chunk of the exporter (under 1 MB): a single short write.
    for (let i = 0; i < 5; i++) await created(h, token, { type: 'memo', transcript: `long ${i} ${'words '.repeat(3000)}`, recordedAt: MARCH + i });
    const r = exportWithLimit(db, h, dir, 'json');
    assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.deepEqual(JSON.parse(r.stderr).error, { code: 'export_failed', message: `cannot write ${file}: file too large` });
    assert.equal(fs.readFileSync(file, 'utf8'), good, 'the previous export is kept whole');
    assert.deepEqual(temps(dir), [], 'the temporary file is removed');
  });

  it('markdown: a note that does not fit fails the export (exit 1, naming the note), leaves no temporary file and keeps the notes written', async () => {
    const { h, token, db, ids } = await library();
    const dir = fresh();
    run(h, dir);
    const kept = path.join(dir, '2025', '03', `${ids.march}.md`);
    const before = fs.readFileSync(kept, 'utf8');
    const big = await created(h, token, { type: 'memo', transcript: 'words '.repeat(15000), recordedAt: MARCH + 5000 });
    const r = exportWithLimit(db, h, dir, 'markdown');
    assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
    const note = path.join(dir, '2025', '03', `${big.id}.md`);
    assert.deepEqual(JSON.parse(r.stderr).error, { code: 'export_failed', message: `cannot write ${note}: file too large` });
    assert.equal(fs.existsSync(note), false, 'no truncated note');
    assert.deepEqual(temps(dir), [], 'no temporary file left beside the notes');
    assert.equal(fs.readFileSync(kept, 'utf8'), before);
  });
});
