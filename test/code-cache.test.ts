// V8's code cache for the bundle's programs (src/code-cache.ts): where it may live, what it is named,
// how it is written and pruned, and, against the built bundle, that a second start uses it, that a
// new build or a damaged file is written again, and that the program runs whatever the cache does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cacheFileName, cacheFolder, writeCache } from '../src/code-cache';
import { cleanEnv, ensureBundle, installCopy, ROOT, runCli, startServe } from './helpers/bundle';
import { waitFor } from './helpers/wait';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-code-cache-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(tmp, `d${n++}`);

describe('the cache folder', () => {
  it('is made for its user alone (0700) where NODE_COMPILE_CACHE says', () => {
    const dir = path.join(fresh(), 'nested');
    assert.equal(cacheFolder({ NODE_COMPILE_CACHE: dir }), dir);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  });

  it('defaults to a folder of this user in the system temporary directory', () => {
    assert.equal(cacheFolder({}), path.join(os.tmpdir(), `reclib-code-cache-${process.getuid?.() ?? 'user'}`));
  });

  it('is not used when turned off, when others may write in it, when it belongs to someone else, or is not a folder', () => {
    assert.equal(cacheFolder({ NODE_DISABLE_COMPILE_CACHE: '1', NODE_COMPILE_CACHE: fresh() }), undefined);
    const open = fresh();
    fs.mkdirSync(open, { mode: 0o777 });
    fs.chmodSync(open, 0o777);
    assert.equal(cacheFolder({ NODE_COMPILE_CACHE: open }), undefined);
    const file = fresh();
    fs.writeFileSync(file, '');
    assert.equal(cacheFolder({ NODE_COMPILE_CACHE: file }), undefined);
    if (process.getuid?.() === 0) {
      const theirs = fresh();
      fs.mkdirSync(theirs, { mode: 0o700 });
      fs.chownSync(theirs, 65534, 65534);
      assert.equal(cacheFolder({ NODE_COMPILE_CACHE: theirs }), undefined);
    }
  });
});

describe('the cache file', () => {
  it('is named by the program and its place, then by its text (a hash of its bytes), then by Node and its flags', () => {
    const text = Buffer.from('module.exports = "old-version-A";');
    const a = cacheFileName('/srv/reclib/dist/reclib.program.cjs', text);
    assert.equal(cacheFileName('/srv/reclib/dist/reclib.program.cjs', Buffer.from(text)).name, a.name);
    assert.ok(a.name.startsWith(a.build) && a.build.startsWith(a.prefix) && a.prefix.startsWith('reclib.program.cjs-'));
    // Another build of the same length: V8 would run the old one's code for it (it checks only the
    // length), whatever the file's times say (a rewrite within one tick of the file system's clock).
    const b = cacheFileName('/srv/reclib/dist/reclib.program.cjs', Buffer.from('module.exports = "new-version-B";'));
    assert.equal(b.prefix, a.prefix);
    assert.notEqual(b.build, a.build);
    assert.notEqual(cacheFileName('/opt/reclib/dist/reclib.program.cjs', text).prefix, a.prefix);
  });

  it('is written whole, replaces the same program’s earlier builds, keeps its other ways of starting, removes week-old files of others and keeps the rest', () => {
    const dir = fresh();
    fs.mkdirSync(dir, { mode: 0o700 });
    const now = Date.now();
    const put = (name: string, ageMs = 0) => {
      fs.writeFileSync(path.join(dir, name), 'x');
      fs.utimesSync(path.join(dir, name), (now - ageMs) / 1000, (now - ageMs) / 1000);
    };
    const h = (c: string) => c.repeat(16);
    const p = `p.cjs-${h('a')}-`;
    const q = `q.cjs-${h('b')}-`;
    put(`${p}${h('1')}-${h('e')}.bin`); // an earlier build
    put(`${p}${h('2')}-${h('f')}.bin`, 3600_000); // this build, started with other flags
    put(`${q}${h('3')}-${h('e')}.bin`, 3600_000);
    put(`${q}${h('4')}-${h('e')}.bin`, 8 * 24 * 3600_000);
    put('notes.txt', 8 * 24 * 3600_000);
    put('another-tool.bin', 8 * 24 * 3600_000); // not reclib's: a shared NODE_COMPILE_CACHE
    writeCache(Buffer.from('code'), dir, path.join(dir, `${p}${h('2')}-${h('e')}.bin`), { prefix: p, build: `${p}${h('2')}-` }, now);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['another-tool.bin', 'notes.txt', `${p}${h('2')}-${h('e')}.bin`, `${p}${h('2')}-${h('f')}.bin`, `${q}${h('3')}-${h('e')}.bin`]);
    assert.equal(fs.readFileSync(path.join(dir, `${p}${h('2')}-${h('e')}.bin`), 'utf8'), 'code');
    assert.equal(fs.statSync(path.join(dir, `${p}${h('2')}-${h('e')}.bin`)).mode & 0o777, 0o600);
  });

  it('that cannot be written leaves nothing behind and throws nothing', () => {
    const dir = fresh();
    assert.doesNotThrow(() => writeCache(Buffer.from('code'), dir, path.join(dir, 'p-new.bin'), { prefix: 'p-', build: 'p-' }));
    assert.equal(fs.existsSync(dir), false);
    // A folder that cannot be searched (mode 0600, for a user other than root) fails both the write
    // and the removal of what it left, with EACCES; a file where the folder should be, with ENOTDIR.
    // Either ran from a timer 2 s after the start or from an 'exit' handler, where a throw ends a
    // server or prints a stack after a command that succeeded.
    const notAFolder = fresh();
    fs.writeFileSync(notAFolder, '');
    assert.doesNotThrow(() => writeCache(Buffer.from('code'), notAFolder, path.join(notAFolder, 'p-new.bin'), { prefix: 'p-', build: 'p-' }));
  });
});

describe('the bundle with its cache', () => {
  const debugLines = (stderr: string) => stderr.split('\n').filter((l) => /^RECLIB \d+: code cache/.test(l));

  it('writes it at the first run, uses it at the next, and writes it again for a new build or a damaged file', async () => {
    const dir = fresh();
    const env = { NODE_COMPILE_CACHE: dir, NODE_DEBUG: 'reclib' };
    // A copy of the bundle's files, so that its program can be touched without touching dist/.
    const copy = installCopy(fresh());
    const bundle = path.join(copy, 'reclib.cjs');
    const program = path.join(copy, 'reclib.program.cjs');

    const first = await runCli(['--version'], { env, bundle });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout.trim(), JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    assert.match(debugLines(first.stderr).join('\n'), /code cache written: .*reclib\.program\.cjs-/);
    // Node 22 and later keep their own cache in the same folder (a folder per version): only ours count.
    const ours = () => fs.readdirSync(dir).filter((f) => f.endsWith('.bin'));
    const written = ours();
    assert.equal(written.length, 1);

    const second = await runCli(['--version'], { env, bundle });
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(debugLines(second.stderr).map((l) => l.replace(/^RECLIB \d+: /, '').replace(/: .*/, '')), ['code cache used']);
    assert.deepEqual(ours(), written);

    // A new build of the program, of the same length, its times put back: a new file, the old one removed.
    const st = fs.statSync(program);
    const text = fs.readFileSync(program, 'latin1');
    assert.ok(text.includes('__reclibImportMeta'));
    fs.writeFileSync(program, text.replaceAll('__reclibImportMeta', '__reclibImportMetX'), 'latin1');
    fs.utimesSync(program, st.atime, st.mtime);
    const rebuilt = await runCli(['--version'], { env, bundle });
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    const afterRebuild = ours();
    assert.equal(afterRebuild.length, 1);
    assert.notDeepEqual(afterRebuild, written);

    // Damaged (V8 checks what it reads): refused, the program runs, the file is written again.
    const file = path.join(dir, afterRebuild[0]!);
    fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 7));
    const damaged = await runCli(['--version'], { env, bundle });
    assert.equal(damaged.code, 0, damaged.stderr);
    assert.match(debugLines(damaged.stderr).join('\n'), /refused by V8[^]*code cache written/);
    const healed = await runCli(['--version'], { env, bundle });
    assert.match(debugLines(healed.stderr).join('\n'), /^RECLIB \d+: code cache used/);
  });

  it('keeps one for each way of starting a build: the server with the Docker image\'s flag and the CLI without do not remove each other\'s', async () => {
    const dir = fresh();
    const env = { NODE_COMPILE_CACHE: dir, NODE_DEBUG: 'reclib' };
    const said = (r: { stderr: string }) => debugLines(r.stderr).map((l) => l.replace(/^RECLIB \d+: /, '').replace(/: .*/, ''));
    const flag = ['--max-semi-space-size=16'];
    assert.deepEqual(said(await runCli(['--version'], { env, nodeArgs: flag })), ['code cache written']);
    assert.deepEqual(said(await runCli(['--version'], { env })), ['code cache written']);
    assert.deepEqual(said(await runCli(['--version'], { env, nodeArgs: flag })), ['code cache used']);
    assert.deepEqual(said(await runCli(['--version'], { env })), ['code cache used']);
    // Ours only: from Node 22.1 on, Node keeps its own compile cache (of the loader) in a folder of
    // the same NODE_COMPILE_CACHE.
    assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.bin')).length, 2);
  });

  it('serve keeps one for itself and one for its writer thread, and uses both at the next start', async () => {
    const dir = fresh();
    const db = path.join(fresh(), 'lib.db');
    fs.mkdirSync(path.dirname(db));
    const env = { NODE_COMPILE_CACHE: dir, NODE_DEBUG: 'reclib' };
    const programs = (lines: string[]) => lines.map((l) => /([\w-]+)\.program\.cjs-/.exec(l)?.[1]).sort();
    for (const expected of ['code cache written', 'code cache used']) {
      const s = await startServe(['--db', db, '--host', '127.0.0.1'], { env });
      assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
      // The writer thread starts shortly after the server listens; each thread writes its cache 2 s after its start.
      const seen = () => programs(debugLines(s.stderr()).filter((l) => l.includes(expected)));
      await waitFor(() => seen().length >= 2, () => `both threads' "${expected}": ${s.stderr()}`).finally(() => s.stop('SIGTERM'));
      assert.deepEqual(seen(), ['reclib', 'writer-thread-worker'], s.stderr());
    }
  });

  it('uses no file in the folder that is a link, or that another user owns or may write (what is in it runs)', { timeout: 60_000 }, async () => {
    const dir = fresh();
    const env = { NODE_COMPILE_CACHE: dir, NODE_DEBUG: 'reclib' };
    assert.equal((await runCli(['--version'], { env })).code, 0);
    const [name] = fs.readdirSync(dir);
    const file = path.join(dir, name!);
    const elsewhere = fresh();
    fs.copyFileSync(file, elsewhere);
    const cases: Array<[string, () => void]> = [
      ['a link to a file elsewhere', () => fs.symlinkSync(elsewhere, file)],
      ['a hard link to a file elsewhere', () => fs.linkSync(elsewhere, file)],
      // Not opened to wait for a writer: the start would hang there.
      ['a FIFO', () => execFileSync('mkfifo', [file])],
      ['a file others may write', () => {
        fs.copyFileSync(elsewhere, file);
        fs.chmodSync(file, 0o622);
      }],
    ];
    if (process.getuid?.() === 0) {
      cases.push(['a file of another user', () => {
        fs.copyFileSync(elsewhere, file);
        fs.chownSync(file, 65534, 65534);
      }]);
    }
    for (const [what, make] of cases) {
      fs.rmSync(file, { force: true });
      make();
      const r = await runCli(['--version'], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /code cache used/, what);
      assert.match(r.stderr, /code cache not used: [^]*code cache written/, `${what}: ${r.stderr}`);
      // Written again in its place: a plain file of this user.
      const st = fs.lstatSync(file);
      assert.ok(st.isFile() && st.uid === (process.getuid?.() ?? st.uid) && (st.mode & 0o777) === 0o600, what);
    }
  });

  it('the build leaves one for npm start, written by a server\'s start (main and writer thread): the first start after a build uses it', async () => {
    const dir = fresh();
    const copy = installCopy(fresh());
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/warm-code-cache.mjs'), copy], { env: cleanEnv({ NODE_COMPILE_CACHE: dir }) });
    // npm start's Node flags, as package.json has them (`node [flags] dist/reclib.cjs serve`).
    const flags = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ').slice(1, -2);
    const first = await runCli(['--version'], { env: { NODE_COMPILE_CACHE: dir, NODE_DEBUG: 'reclib' }, bundle: path.join(copy, 'reclib.cjs'), nodeArgs: flags });
    assert.equal(first.code, 0, first.stderr);
    assert.match(debugLines(first.stderr).join('\n'), /^RECLIB \d+: code cache used/);
    // Written by a server's start, for the writer thread too.
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.bin')).map((f) => f.replace(/\.program\.cjs-.*/, '')).sort(), ['reclib', 'writer-thread-worker']);
  });

  it('runs the program without one when the cache is off, or when its folder cannot be made', async () => {
    const off = await runCli(['--version'], { env: { NODE_DISABLE_COMPILE_CACHE: '1', NODE_DEBUG: 'reclib' } });
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(debugLines(off.stderr), []);
    const blocker = fresh();
    fs.writeFileSync(blocker, '');
    const blocked = await runCli(['--version'], { env: { NODE_COMPILE_CACHE: path.join(blocker, 'cache'), NODE_DEBUG: 'reclib' } });
    assert.equal(blocked.code, 0, blocked.stderr);
    assert.match(blocked.stderr, /code cache not used/);
  });

  it("turns Node's own compile cache (Node 22.1 and later) on only in the folder it checked, never in the one Node would pick", async () => {
    // Node's default is a folder in the system's temporary directory that it makes without asking
    // who made it first, and whose files it runs. On Node 20, which has none, the preload plays it.
    const preload = path.join(fresh());
    fs.writeFileSync(preload, "require('node:module').enableCompileCache = (...args) => process.stderr.write(`enableCompileCache ${JSON.stringify(args)}\\n`);\n");
    const calls = async (env: Record<string, string>) => {
      const r = await runCli(['--version'], { env, nodeArgs: ['--require', preload] });
      assert.equal(r.code, 0, r.stderr);
      return r.stderr.split('\n').filter((l) => l.startsWith('enableCompileCache')).map((l) => JSON.parse(l.slice('enableCompileCache '.length)) as unknown[]);
    };
    const dir = fresh();
    assert.deepEqual(await calls({ NODE_COMPILE_CACHE: dir }), [[dir]]);
    const open = fresh();
    fs.mkdirSync(open, { mode: 0o777 });
    fs.chmodSync(open, 0o777);
    assert.deepEqual(await calls({ NODE_COMPILE_CACHE: open }), [], 'a folder others may write: neither cache');
    assert.deepEqual(await calls({ NODE_DISABLE_COMPILE_CACHE: '1' }), []);
    const tmpdir = fresh();
    fs.mkdirSync(tmpdir, { mode: 0o1777 });
    fs.chmodSync(tmpdir, 0o1777);
    assert.deepEqual(await calls({ TMPDIR: tmpdir, NODE_COMPILE_CACHE: '' }), [[path.join(tmpdir, `reclib-code-cache-${process.getuid?.() ?? 'user'}`)]]);
  });

  it('runs the programs in strict mode, as the ES modules they are built from ran', () => {
    ensureBundle();
    // A "use strict" directive counts only before any statement: after the banner's it is an expression, and the program sloppy.
    const directive = /^(#![^\n]*\n)?("use strict"|'use strict');/;
    for (const file of ['reclib.cjs', 'reclib.program.cjs', 'writer-thread-worker.program.cjs']) {
      const text = fs.readFileSync(path.join(ROOT, 'dist', file), 'utf8');
      assert.match(text, directive, `${file}: ${text.slice(0, 120)}`);
    }
  });

  it('with --enable-source-maps, an error\'s stack names the sources, as it did before the code cache', async () => {
    // Node applies a source map to what its module loader compiled, not to a vm.Script.
    const preload = path.join(fresh() + '.cjs');
    fs.writeFileSync(preload, "const write = process.stdout.write.bind(process.stdout);\nprocess.stdout.write = (s, ...rest) => { if (/^\\d+\\.\\d+\\.\\d+/.test(String(s))) throw new Error('boom'); return write(s, ...rest); };\n");
    const r = await runCli(['--version'], { nodeArgs: ['--enable-source-maps', '--require', preload], env: { NODE_COMPILE_CACHE: fresh() } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /Error: boom/);
    assert.match(r.stderr, /at print \(.*src\/cli\/output\.ts:\d+:\d+\)/, r.stderr);
  });

  it('a failure no command caught ends the CLI with exit 1, as a rejected top-level await did, whatever --unhandled-rejections says', async () => {
    const preload = path.join(fresh() + '.cjs');
    fs.writeFileSync(preload, "const write = process.stdout.write.bind(process.stdout);\nprocess.stdout.write = (s, ...rest) => { if (/^\\d+\\.\\d+\\.\\d+/.test(String(s))) throw new Error('boom'); return write(s, ...rest); };\n");
    for (const mode of ['throw', 'warn', 'none']) {
      const r = await runCli(['--version'], { nodeArgs: [`--unhandled-rejections=${mode}`, '--require', preload] });
      assert.equal(r.code, 1, `${mode}: ${r.stderr}`);
      assert.match(r.stderr, /Error: boom/);
    }
  });

  it('the writer thread whose app fails to start ends with an error, whatever --unhandled-rejections says (its starter would wait for it forever)', () => {
    ensureBundle();
    // No workerData: startWriter throws. Run in a process of its own, since the mode comes from NODE_OPTIONS there.
    const script = `import { Worker } from 'node:worker_threads';
const w = new Worker(new URL(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/writer-thread-worker.mjs')).href)}), { execArgv: [], workerData: {} });
const t = setTimeout(() => { console.log('running'); void w.terminate(); }, 5000);
w.on('error', () => { clearTimeout(t); console.log('error'); });`;
    for (const mode of ['throw', 'warn']) {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: cleanEnv({ NODE_OPTIONS: `--unhandled-rejections=${mode}` }) });
      assert.equal(r.stdout.trim(), 'error', `${mode}: ${r.stdout}${r.stderr}`);
    }
  });

  it('dist/reclib.mjs, the command of earlier versions, still runs the CLI', async () => {
    const r = await runCli(['--version'], { bundle: path.join(ROOT, 'dist/reclib.mjs') });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});
