// Entry point: hands argv to the CLI. `reclib serve` gets a program with the serve command alone
// (src/cli/serve-program.ts says why); every other command line the whole CLI. Built as
// dist/reclib.program.cjs, which the command dist/reclib.cjs runs with V8's code cache
// (bin/load-program.ts).
import { nodeVersionProblem } from '../src/node-version';
import { throwUncaught } from '../src/throw-uncaught';

const tooOld = nodeVersionProblem(process.versions.node);
if (tooOld !== null) {
  process.stderr.write(`${tooOld}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const program =
    process.argv[2] === 'serve' ? (await import('../src/cli/serve-program')).buildServeProgram() : (await import('../src/cli/program')).buildProgram();
  await program.parseAsync(process.argv);
}

// A failure the commands did not catch ends the process (exit 1).
main().catch(throwUncaught);
