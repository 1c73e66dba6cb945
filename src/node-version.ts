// The oldest Node reclib runs on (package.json `engines`; test/node-version.test.ts keeps the two
// in step). npm only warns about `engines`, so the entry checks it and says so, instead of
// failing later at a missing API (`process.getBuiltinModule`, 20.16; the start and the first
// webhook need it).
export const MIN_NODE = [20, 18] as const;

/** Why Node `version` (process.versions.node) cannot run reclib, or null when it can. */
export function nodeVersionProblem(version: string): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor, needMinor] = MIN_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return `reclib needs Node.js ${needMajor}.${needMinor} or newer; this is Node.js ${version}`;
}
