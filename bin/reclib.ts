#!/usr/bin/env node
// Entry point: hands argv to the CLI. `reclib serve` gets a program with the serve command alone
// (src/cli/serve-program.ts says why); every other command line the whole CLI.
import nodeModule from 'node:module';
import { nodeVersionProblem } from '../src/node-version';

const tooOld = nodeVersionProblem(process.versions.node);
if (tooOld !== null) {
  process.stderr.write(`${tooOld}\n`);
  process.exit(1);
}

// From Node 22.1 on, V8 keeps the compiled code of the bundle on disk (NODE_COMPILE_CACHE, or a
// folder in the system's temporary directory) and the next start reads it instead of parsing
// ~400 KB of JavaScript again (compiling it was about a quarter of what a start costs beyond
// `node -e 0` in a CPU profile on Node 20; bench/results-notes.md).
// Node 20 has no such function; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const program =
  process.argv[2] === 'serve' ? (await import('../src/cli/serve-program')).buildServeProgram() : (await import('../src/cli/program')).buildProgram();
await program.parseAsync(process.argv);

export {};
