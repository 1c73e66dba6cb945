// Creates per second with --durability full (synchronous=FULL, the default: an acknowledged write
// survives power loss) and --durability normal (survives a crash of the process), side by side:
// what the fsync per commit costs once group commit shares it among concurrent requests
// (src/db/writer.ts). One server at a time on the run's database, modes alternating across rounds
// so that neither always runs on the fuller database or the warmer cache.
import fs from 'node:fs';
import { fsyncFile } from './cache';
import type { LoadResult } from './load';
import { load, LOADER_CORE, SERVER_CORE, startServer, stop } from './processes';
import { median, round2 } from './stats';

export type DurabilityMode = 'full' | 'normal';

export interface DurabilitySummary {
  mode: DurabilityMode;
  rps: number;
  p50: number;
  p99: number;
  /** Median of the rounds' iowait on the server's core (%): the disk flushes show up here. */
  ioWait: number;
}

export interface DurabilityResults {
  rounds: number;
  durationSec: number;
  connections: number;
  modes: DurabilitySummary[];
  /** creates/s with full ÷ creates/s with normal. */
  fullVsNormal: number;
  raw: Record<DurabilityMode, LoadResult[]>;
}

export async function measureDurability(opts: {
  db: string;
  token: string;
  bodiesFile: string;
  rounds: number;
  durationSec: number;
  connections: number;
  keyPrefix: string;
  log: (line: string) => void;
}): Promise<DurabilityResults> {
  const raw: Record<DurabilityMode, LoadResult[]> = { full: [], normal: [] };
  for (let round = 0; round < opts.rounds; round++) {
    const order: DurabilityMode[] = round % 2 === 0 ? ['full', 'normal'] : ['normal', 'full'];
    for (const mode of order) {
      const server = await startServer(opts.db, undefined, ['--durability', mode]);
      try {
        const run = (seconds: number, tag: string) =>
          load({
            url: server.url,
            token: opts.token,
            durationSec: seconds,
            connections: opts.connections,
            mode: 'create',
            path: '/api/v2/recordings',
            dataFile: opts.bodiesFile,
            keyPrefix: `${opts.keyPrefix}-${tag}`,
            serverPid: server.pid,
            serverCore: Number(SERVER_CORE),
            loaderCore: Number(LOADER_CORE),
          });
        await run(1, `durability-warm-${round}-${mode}`);
        const r = await run(opts.durationSec, `durability-${round}-${mode}`);
        raw[mode].push(r);
        opts.log(`round ${round + 1}/${opts.rounds} create with --durability ${mode.padEnd(6)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  iowait ${r.ioWaitOnServerCore}%`);
      } finally {
        await stop(server);
      }
      // The next run starts with the disk quiet: write-back of this run is charged to this run.
      for (const f of [opts.db, `${opts.db}-wal`]) if (fs.existsSync(f)) fsyncFile(f);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  const summary = (mode: DurabilityMode): DurabilitySummary => ({
    mode,
    rps: Math.round(median(raw[mode].map((r) => r.rps))),
    p50: round2(median(raw[mode].map((r) => r.p50))),
    p99: round2(median(raw[mode].map((r) => r.p99))),
    ioWait: round2(median(raw[mode].map((r) => r.ioWaitOnServerCore))),
  });
  const modes = [summary('full'), summary('normal')];
  return { rounds: opts.rounds, durationSec: opts.durationSec, connections: opts.connections, modes, fullVsNormal: round2(modes[0]!.rps / modes[1]!.rps), raw };
}
