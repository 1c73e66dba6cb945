#!/usr/bin/env node
// Entry point: hands argv to the CLI.
import { buildProgram } from '../src/cli/program';

await buildProgram().parseAsync(process.argv);
