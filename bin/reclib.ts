#!/usr/bin/env node
// Entry point: hands argv to the CLI. `reclib serve` gets a program with the serve command alone
// (src/cli/serve-program.ts says why); every other command line the whole CLI.
const program =
  process.argv[2] === 'serve' ? (await import('../src/cli/serve-program')).buildServeProgram() : (await import('../src/cli/program')).buildProgram();
await program.parseAsync(process.argv);

export {};
