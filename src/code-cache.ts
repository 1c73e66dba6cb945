// Runs one of the bundle's programs (dist/reclib.program.cjs, dist/writer-thread-worker.program.cjs, and those
// build.mjs's LAZY_PROGRAMS makes of the MCP SDK and prom-client, at their first import) with V8's
// code cache: the first start keeps the code V8 compiled on disk, and later starts of the same build
// read it instead of parsing and compiling ~0.5 MB of JavaScript again. This is what Node 22.1's
// `module.enableCompileCache()` does for modules, done here with `vm.Script`'s cached data so that
// it works on every Node reclib supports: on Node 20 a start to the first /healthz went from ~140 to
// ~112 ms on a library of 100,000 (bench/results-notes.md, 2026-11-27). The programs are CommonJS
// because only a script, not an ES module, takes cached data without an experimental flag.
//
// Where: NODE_COMPILE_CACHE (Node's own variable for its cache) or `reclib-code-cache-<uid>` in the
// system's temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's. The
// folder must be ours and writable by nobody else (reclib makes it 0700), since what is in it runs:
// otherwise the program runs without a cache. Each program and place keeps one file per way of
// starting it, named by a hash of the program's text, Node's version and its flags; a new build's
// file replaces those of earlier ones. V8 refuses a file made by another V8, with other flags or
// for another source length, and it is then written again. Nothing here ever stops a program
// from running: a cache that cannot be read, used or written is skipped (NODE_DEBUG=reclib says
// why). Node's own compile cache (Node 22.1 and later) is turned on only in the folder checked
// here (bin/load-program.ts): left to itself it would use a folder in the system's temporary
// directory that any user may have made first, and whose files it runs.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

// Not imported: the bundle's import of node:util reads its exports, and on Node 22 and later some of
// them load modules of their own (worker_threads among them) before the server listens
// (test/e2e/start-modules.test.ts).
const debug = process.getBuiltinModule('node:util').debuglog('reclib');

/** How long after the start the cache is written when there was none: long enough that the start's code has been compiled, short enough for a server stopped soon after. */
export const WRITE_AFTER_MS = 2_000;

/** Cache files of a bundle that is gone (a checkout or temporary copy removed) are removed after this long. */
const ORPHAN_AGE_MS = 7 * 24 * 3600_000;

/** The folder the cache lives in, made if missing, or undefined when it is turned off or not safe to use. */
export function cacheFolder(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const uid = process.getuid?.();
  const dir = env.NODE_COMPILE_CACHE || path.join(os.tmpdir(), `reclib-code-cache-${uid ?? 'user'}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const why = distrust(fs.lstatSync(dir), dir, 'folder');
    return why === undefined ? dir : skip(why);
  } catch (err) {
    return skip(`${dir}: ${(err as Error).message}`);
  }
}

/** Why the cache folder or a file in it must not be used (what is in them runs), or undefined: it must be one of this user's that nobody else may write. */
function distrust(st: fs.Stats, what: string, kind: 'folder' | 'file'): string | undefined {
  const uid = process.getuid?.();
  if (kind === 'folder' ? !st.isDirectory() : !st.isFile()) return `${what} is not a ${kind}`;
  if (uid !== undefined && st.uid !== uid) return `${what} belongs to another user`;
  if (uid !== undefined && (st.mode & 0o022) !== 0) return `others may write ${kind === 'folder' ? 'in ' : ''}${what}`;
  // A hard link made elsewhere (where it could have been put while the folder was another's) to a
  // file of this user: reclib's own files have one name.
  if (kind === 'file' && st.nlink !== 1) return `${what} has other names (hard links)`;
  return undefined;
}

function skip(why: string): undefined {
  debug('code cache not used: %s', why);
  return undefined;
}

/** What a cache file's name is made of: the program and its folder (`prefix`), then the build of it (`build`), then Node and its flags. */
export interface CacheName {
  prefix: string;
  build: string;
}

/**
 * The cache file's name: the program and the folder it is in, then what makes V8's code for it
 * valid. V8 checks only the length of the source, and runs the cached code of another text of the
 * same length: the build part is a hash of the very bytes compiled (~1 ms for the server's
 * program). A name made of the file's size, times and inode missed a rewrite of the same length
 * within one tick of the file system's clock (1-2 s on some), and an old build's code ran.
 */
export function cacheFileName(file: string, text: Buffer): CacheName & { name: string } {
  const hash = (s: string | Buffer) => createHash('sha256').update(s).digest('hex').slice(0, 16);
  const prefix = `${path.basename(file)}-${hash(path.resolve(file))}-`;
  const build = `${prefix}${hash(text)}-`;
  // V8 refuses code compiled with other flags: Node's flags are part of the name, so that two ways
  // of starting (the Docker image's flag, a CLI command without it) keep a file each.
  const runtime = hash([process.version, process.arch, process.execArgv.join(' '), process.env.NODE_OPTIONS ?? ''].join('\0'));
  return { prefix, build, name: `${build}${runtime}.bin` };
}

/** A cache file's name as cacheFileName makes it (reclib removes no other file, in a NODE_COMPILE_CACHE others may share), or a write of one left by a process that ended in its middle. */
const OURS = /-[0-9a-f]{16}(-[0-9a-f]{16}){1,2}\.bin(\.\d+\.[0-9a-z]+\.tmp)?$/;

/**
 * Runs the CommonJS program `url` (a file beside the calling loader or program) as Node would run it
 * as a module, with the code cache when there is one, and returns its exports.
 */
export function runWithCodeCache(url: URL, dir: string | undefined = cacheFolder()): unknown {
  const file = fileURLToPath(url);
  // Node applies source maps (--enable-source-maps, in NODE_OPTIONS too) only to code its module
  // loader compiled, not to a vm.Script: then the program is required, and stacks name the sources.
  if (process.sourceMapsEnabled) {
    skip('source maps are on');
    return createRequire(file)(file);
  }
  const bytes = fs.readFileSync(file);
  // A `#!` line is valid only at the very start of a script; as a comment it keeps the line numbers.
  const source = bytes.toString('utf8').replace(/^#!/, '//');
  let cachePath: string | undefined;
  let named: CacheName | undefined;
  let cachedData: Buffer | undefined;
  if (dir !== undefined) {
    // Named by the bytes read, which are the text compiled (a build writing the file meanwhile included).
    const { name, ...parts } = cacheFileName(file, bytes);
    named = parts;
    cachePath = path.join(dir, name);
    cachedData = readCache(cachePath);
  }
  // The same wrapper as Node's for a CommonJS module; the newline keeps the source map's comment on a line of its own.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: file, cachedData });
  if (cachedData !== undefined) debug(script.cachedDataRejected === true ? 'code cache refused by V8, to be written again: %s' : 'code cache used: %s', cachePath);
  if (cachePath !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) scheduleWrite(script, dir as string, cachePath, named as CacheName);
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: unknown, f: string, d: string) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file));
  return module.exports;
}

/**
 * The cache file's bytes, if it is a file of this user that nobody else may write: the folder's own
 * check does not cover a file put there while it was not so, or a folder replaced after that check
 * by someone who may write in its parent. Opened without following a link, then checked as opened.
 */
function readCache(cachePath: string): Buffer | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in its place would otherwise block the open until a writer came.
    fd = fs.openSync(cachePath, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP: a link (O_NOFOLLOW); it is written over as a file.
    return code === 'ENOENT' ? undefined : skip(code === 'ELOOP' ? `${cachePath} is a link` : (err as Error).message);
  }
  try {
    const why = distrust(fs.fstatSync(fd), cachePath, 'file');
    return why === undefined ? fs.readFileSync(fd) : skip(why);
  } catch (err) {
    return skip((err as Error).message);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the cache once, after WRITE_AFTER_MS or at exit, whichever comes first; never throws. */
function scheduleWrite(script: vm.Script, dir: string, cachePath: string, named: CacheName): void {
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    process.off('exit', write);
    // Run from a timer or an 'exit' handler: a throw there would end a server, or print a stack after a command that succeeded.
    try {
      writeCache(script.createCachedData(), dir, cachePath, named);
    } catch (err) {
      debug('code cache not written: %s', (err as Error).message);
    }
  };
  setTimeout(write, WRITE_AFTER_MS).unref();
  process.on('exit', write);
}

/**
 * Writes `data` to `cachePath` (whole or not at all), and removes the program's caches of earlier
 * builds (not those of this build for other flags) and week-old ones (of bundles that are gone, or
 * of a Node no longer used).
 */
export function writeCache(data: Buffer, dir: string, cachePath: string, named: CacheName, now = Date.now()): void {
  const temp = `${cachePath}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    fs.writeFileSync(temp, data, { mode: 0o600 });
    fs.renameSync(temp, cachePath);
    debug('code cache written: %s (%d bytes)', cachePath, data.length);
  } catch (err) {
    debug('code cache not written: %s', (err as Error).message);
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // It could not be made either (a folder that cannot be searched, a file in the folder's place).
    }
    return;
  }
  try {
    for (const name of fs.readdirSync(dir)) {
      const other = path.join(dir, name);
      if (other === cachePath || !OURS.test(name)) continue;
      const earlierBuild = name.startsWith(named.prefix) && !name.startsWith(named.build) && name.endsWith('.bin');
      try {
        if (earlierBuild || now - fs.lstatSync(other).mtimeMs > ORPHAN_AGE_MS) fs.rmSync(other, { force: true });
      } catch (err) {
        // Gone meanwhile (another process pruning), or a folder of that name: the others still are looked at.
        debug('old code cache not removed: %s', (err as Error).message);
      }
    }
  } catch (err) {
    debug('old code caches not removed: %s', (err as Error).message);
  }
}
