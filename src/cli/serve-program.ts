// The program as `reclib serve` needs it: the same top level (programBase) with the serve command
// alone. bin/reclib.ts loads this module instead of program.ts when the first argument is "serve",
// so a server's start does not load and build the admin commands (their modules are a chunk of
// their own in the bundle): building every command was ~27 ms of a start in a CPU profile on a
// loaded 2-core machine, serve's own ~7 ms. Every other command line goes through program.ts.
// test/cli/serve-program.test.ts checks that both programs define serve alike.
import type { Command } from 'commander';
import { programBase } from './program-base';
import { registerServe } from './serve-command';

export function buildServeProgram(): Command {
  const program = programBase();
  registerServe(program);
  return program;
}
