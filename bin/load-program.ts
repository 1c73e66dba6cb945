#!/usr/bin/env node
// The loader build.mjs makes twice: dist/reclib.cjs (the `reclib` command) and
// dist/writer-thread-worker.mjs (the writer thread's file). Each runs the CommonJS program of the
// same name beside it (RECLIB_PROGRAM, set at build time) with V8's code cache
// (src/code-cache.ts says why). From the sources, bin/reclib.ts runs the CLI directly.
import nodeModule from 'node:module';
import { cacheFolder, runWithCodeCache } from '../src/code-cache';

declare const RECLIB_PROGRAM: string;

const dir = cacheFolder();
// From Node 22.1 on, Node keeps its own compiled code of modules too: this loader's, the
// checkpointer's thread's, better-sqlite3's. Only in the folder cacheFolder() checked: without one,
// Node would use a folder in the system's temporary directory without asking who made it, and run
// what another user put there (src/code-cache.ts). NODE_DISABLE_COMPILE_CACHE=1 turns both off.
if (dir !== undefined) (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache?.(dir);
runWithCodeCache(new URL(`./${RECLIB_PROGRAM}`, import.meta.url), dir);
