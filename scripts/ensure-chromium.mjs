// Runs before `npm test`: the browser tests (test/browser/) drive Debian's chromium, which a fresh
// machine does not have. As root with apt-get (CI, a container, the project's machines) it is
// installed; otherwise this says what to do, and the browser tests fail with the same advice.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    console.log(`${chromium} is missing: installing Debian's chromium for the browser tests (apt-get install -y chromium)`);
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
      const run = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'] });
      if (run.status !== 0) {
        console.error(`apt-get ${args.join(' ')} failed (exit ${run.status}); install chromium yourself or set CHROMIUM_PATH`);
        process.exit(1);
      }
    }
  } else {
    console.warn(`the browser tests need chromium at ${chromium}: apt-get install -y chromium, or set CHROMIUM_PATH to a Chromium binary`);
  }
}
