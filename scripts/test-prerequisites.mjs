// Runs before `npm test`: the browser tests (test/web/browser/) drive Debian's chromium, and the
// power-loss tests (test/db/power-loss.test.ts) record a process's writes with strace; a fresh
// machine may have neither. As root with apt-get (CI, a container, the project's machines) the
// missing ones are installed; otherwise this says what to do (the browser tests then fail with the
// same advice, the strace tests are skipped).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const wanted = [
  { pkg: 'chromium', path: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', for: 'the browser tests (or set CHROMIUM_PATH to a Chromium binary)' },
  { pkg: 'strace', path: '/usr/bin/strace', for: 'the power-loss tests' },
];
const missing = wanted.filter((w) => !fs.existsSync(w.path));
if (missing.length > 0) {
  const pkgs = missing.map((w) => w.pkg);
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    console.log(`installing what the tests need: apt-get install -y ${pkgs.join(' ')}`);
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...pkgs]]) {
      const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'] });
      if (run.status !== 0) {
        console.error(`apt-get ${args.join(' ')} failed (exit ${run.status}); install ${pkgs.join(' ')} yourself`);
        process.exit(1);
      }
    }
  } else {
    for (const w of missing) console.warn(`${w.for} need ${w.pkg} at ${w.path}: apt-get install -y ${w.pkg}`);
  }
}
