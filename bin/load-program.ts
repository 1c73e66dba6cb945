#!/usr/bin/env node
// The loader build.mjs makes twice: dist/reclib.cjs (the `reclib` command) and
// dist/writer-thread-worker.mjs (the writer thread's file). Each runs the CommonJS program of the
// same name beside it (RECLIB_PROGRAM, set at build time) with V8's code cache
// (src/code-cache.ts says why). From the sources, bin/reclib.ts runs the CLI directly.
import nodeModule from 'node:module';
import { runWithCodeCache } from '../src/code-cache';

declare const RECLIB_PROGRAM: string;

// From Node 22.1 on, Node keeps its own compiled code of ES modules too: this loader's and the
// checkpointer's thread's. NODE_DISABLE_COMPILE_CACHE=1 turns both caches off.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
runWithCodeCache(new URL(`./${RECLIB_PROGRAM}`, import.meta.url));
