// `npm run bench [-- --size 1000000 --rounds 3 --duration 5 --connections 32 --only get,baseline,cold-start --cpu-prof --reseed --seed-only --no-durability --cold-start 10]`
// Seeds (or reuses) the corpus, starts the built server and the raw baseline pinned to core 0,
// drives each scenario with autocannon from a process pinned to core 1 in interleaved rounds
// (each create round followed by the in-process ceiling of the same shape, bench/ceiling.ts),
// then the read scenarios open loop at half their measured capacity and each scenario with one
// connection, edits and deletes with one connection (bench/edits.ts; `--only writes`), then
// creates with --durability full and normal side by side (bench/durability.ts), then the cold
// start of the bundle against `node -e 0` (bench/cold-start.ts; --only cold-start runs just that),
// and writes the medians to bench/results-<size>.json and bench/results.md, with the disk use of the
// seeded library (bench/disk.ts; --seed-only stops after printing it). Not a test: CI does not run it.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openSqlite } from '../src/db/sqlite';
import { CACHE_DIR, ensureCorpus, fsyncFile, holdBenchLock, noteScrubbed, runCopy } from './cache';
import { diskTarget, diskText, measureDisk } from './disk';
import { measureColdStart, type ColdStartResult } from './cold-start';
import { measureDurability, type DurabilityResults } from './durability';
import { Corpus, GENERATOR_VERSION, QUERIES } from './corpus';
import type { LoadResult } from './load';
import { summariseProfile } from './profile';
import { build, cli, load, LOADER_CORE, memoryMb, ROOT, SERVER_CORE, startBaseline, startServer, stop, type Served } from './processes';
import { printResults, targetRow, textTable, writeResults, type PeakStep, type Results } from './report';
import { roundOrder, SCENARIOS, type Scenario } from './scenarios';
import { measureStall, type StallResult } from './stall';
import { checkTargets, coldStartTargets, machine, median, round2, stallTargets, summarise, type BaselineRatio } from './stats';
import { Ceiling, type CeilingRun } from './ceiling';
import { writeImportBodies } from './create-shapes';
import { measureWrites, type WriteResults } from './edits';
import { CEILING_SHAPES, ceilingTargets, summariseCeiling, writeTargets } from './write-targets';

const { values: opt } = parseArgs({
  options: {
    size: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    reseed: { type: 'boolean', default: false },
    'seed-only': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'no-durability': { type: 'boolean', default: false },
    /** Seconds of the mixed-load stall measurement (0: skip it). */
    stall: { type: 'string', default: '10' },
    /** Alternating pairs of the cold-start measurement (0: skip it). */
    'cold-start': { type: 'string', default: '10' },
  },
});

const int = (name: string, v: string | undefined, min: number, max: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be a whole number in ${min}-${max}`);
  return n;
};

const size = int('size', opt.size, 100, 10_000_000);
const rounds = int('rounds', opt.rounds, 1, 20);
const durationSec = int('duration', opt.duration, 1, 60);
const connections = int('connections', opt.connections, 1, 256);
const stallSec = int('stall', opt.stall, 0, 600);
const coldPairs = int('cold-start', opt['cold-start'], 0, 100);
const singleSec = Math.max(1, Math.round(durationSec * 0.6));
const log = (line: string) => console.log(line);
/** A rise of the server's peak RSS worth naming the phase for (bench output only). */
const PEAK_STEP_MB = 4;
/** Share of a scenario's saturated req/s offered in the open-loop phase. */
const RATED_SHARE = 0.5;
/** Scenarios measured open loop: the search target is judged there; list and events are cheap to add. */
const isRated = (s: Scenario) => s.name.startsWith('search') || s.name === 'list' || s.name === 'events';
const PERMISSIONS = 'recordings:create,recordings:read,recordings:write,recordings:delete,settings:read,settings:write,events:read';

async function getJson(url: string, token?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Checks that each target answers what the scenarios assume, before measuring anything. */
async function sanity(server: Served, baseline: Served, token: string, sampleId: string, expectedRare: number, notes: string[]) {
  const health = await getJson(`${server.url}/healthz`);
  if (health.status !== 200) throw new Error(`GET /healthz answered ${health.status}`);
  const one = await getJson(`${server.url}/api/v2/recordings/${encodeURIComponent(sampleId)}`, token);
  if (one.status !== 200) throw new Error(`GET /api/v2/recordings/${sampleId} answered ${one.status}: ${JSON.stringify(one.body)}`);
  const base = await getJson(`${baseline.url}/api/v2/recordings/${encodeURIComponent(sampleId)}`);
  const baseId = (base.body as { recording?: { id?: string } } | null)?.recording?.id;
  if (base.status !== 200 || baseId !== sampleId) throw new Error(`baseline GET ${sampleId} answered ${base.status}: ${JSON.stringify(base.body)}`);
  const rare = await getJson(`${server.url}/api/v2/recordings?q=${QUERIES.rare}&limit=100`, token);
  const found = (rare.body as { recordings?: unknown[] } | null)?.recordings?.length;
  if (found !== expectedRare) notes.push(`the rare-word search found ${String(found)} recordings, expected ${expectedRare}`);
  for (const s of SCENARIOS.filter((x) => x.spec.mode === 'fixed')) {
    const r = await getJson(server.url + s.spec.path, token);
    if (r.status !== 200) throw new Error(`${s.spec.path} answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
}

/** Sends a signal; a process that already exited is not an error of its own (its exit is reported). */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: gone already.
  }
}

async function main() {
  const t0 = Date.now();
  holdBenchLock();
  log('building dist/reclib.cjs…');
  await build();
  const corpus = await ensureCorpus(size, opt.reseed, log);
  // The seeded library is what was created before now: a corpus seeded by this very run is newer than t0.
  const libraryBefore = Date.now();
  // The seeded library as it is on disk, before the run's own writes (issue 14 point 4).
  const disk = measureDisk(corpus.db);
  log(diskText(disk));
  if (opt['seed-only']) return;
  const only = opt.only?.split(',');
  const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;
  const runStall = stallSec > 0 && (!only || only.includes('stall'));
  // Edits and deletes with one connection (bench/edits.ts): `--only writes`.
  const runWrites = !only || only.includes('writes');
  const runCold = coldPairs > 0 && (!only || only.includes('cold-start'));
  if (scenarios.length === 0 && !runStall && !runWrites && !runCold) throw new Error(`--only matched none of ${[...SCENARIOS.map((s) => s.name), 'stall', 'writes', 'cold-start'].join(', ')}`);

  const db = runCopy(corpus);
  const bodiesFile = path.join(CACHE_DIR, 'create-bodies.json');
  const gen = new Corpus(size);
  // Fresh bodies beyond the corpus; recordedAt is left to the server, as a device app's capture would.
  const bodies = Array.from({ length: 1000 }, (_, k) => {
    const { deviceId: _d, recordedAt: _r, ...body } = gen.recording(size + k);
    return body;
  });
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies));
  const importBodiesFile = writeImportBodies(CACHE_DIR, size);
  const { secret: token } = await cli<{ secret: string }>(['keys', 'create', '--db', db, '--account', corpus.meta.accountId, '--name', 'bench', '--permissions', PERMISSIONS]);
  noteScrubbed(db);
  const sqliteVersion = (openSqlite(':memory:').prepare('select sqlite_version() as v').get() as { v: string }).v;
  const machineInfo = machine(sqliteVersion);
  const profDir = path.join(CACHE_DIR, 'prof');
  if (opt['cpu-prof']) fs.rmSync(profDir, { recursive: true, force: true });
  // Before the long-running servers start, so that neither takes the core from the starts measured.
  let coldStart: ColdStartResult | undefined;
  if (runCold) {
    log(`cold start: ${coldPairs} alternating pairs…`);
    coldStart = await measureColdStart(db, coldPairs, log, token);
  }
  if (scenarios.length === 0 && !runStall && !runWrites) {
    const checks = coldStartTargets(coldStart);
    console.log(textTable(['target', 'required', 'measured', 'result'], checks.map(targetRow)));
    for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(db + suffix, { force: true });
    return;
  }

  // The in-process ceiling of creates (bench/ceiling.ts), on a copy of the database as it is now.
  const ceiling = scenarios.some((s) => CEILING_SHAPES[s.name])
    ? await Ceiling.start(db, token, { device: bodiesFile, import: importBodiesFile }, `bench-${t0}`)
    : undefined;
  const ceilingRuns: Record<string, CeilingRun[]> = {};
  let writes: WriteResults | undefined;
  const server = await startServer(db, opt['cpu-prof'] ? path.join(profDir, 'server') : undefined);
  const baseline = await startBaseline(db, opt['cpu-prof'] ? path.join(profDir, 'baseline') : undefined);
  // Requests each process answered (warm-ups included), to turn profile shares into µs per request.
  const served = { server: 0, baseline: 0 };
  const notes: string[] = [];
  const raw: Record<string, LoadResult[]> = {};
  const single: Record<string, LoadResult[]> = {};
  const rated: Record<string, LoadResult[]> = {};
  let memory = { peakRssMb: NaN, rssMb: NaN };
  // Which phase raised the server's peak RSS (the target is the peak through the whole bench).
  const peakSteps: PeakStep[] = [];
  const notePeak = (after: string) => {
    const m = memoryMb(server.pid);
    if (m.peakRssMb >= (peakSteps.at(-1)?.peakRssMb ?? 0) + PEAK_STEP_MB) peakSteps.push({ after, ...m });
  };
  let stall: StallResult | undefined;
  try {
    const ids = JSON.parse(fs.readFileSync(corpus.idsFile, 'utf8')) as string[];
    await sanity(server, baseline, token, ids[0]!, corpus.meta.rareCount, notes);
    // Both processes are pinned to core 0. The one not being measured is stopped (SIGSTOP) for the
    // run, so its background work (reclib's idle-time index merging, checkpoints) never takes the
    // core from the other; it is continued (SIGCONT) right after.
    // If the bench itself is interrupted meanwhile, both are continued first, so none is left
    // stopped (a stopped process ignores SIGTERM until continued).
    const resumeAll = () => {
      for (const p of [server, baseline]) signal(p.pid, 'SIGCONT');
    };
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        resumeAll();
        process.kill(process.pid, sig);
      });
    }
    const runOne = async (s: Scenario, seconds: number, tag: string, conns = connections, rate?: number) => {
      const idle = s.target === 'server' ? baseline : server;
      signal(idle.pid, 'SIGSTOP');
      try {
        return await runMeasured(s, seconds, tag, conns, rate);
      } finally {
        signal(idle.pid, 'SIGCONT');
        if (s.target === 'server') notePeak(tag);
      }
    };
    const runMeasured = async (s: Scenario, seconds: number, tag: string, conns: number, rate?: number) => {
      const r = await load({
        url: s.target === 'server' ? server.url : baseline.url,
        token: s.target === 'server' ? token : undefined,
        durationSec: seconds,
        connections: conns,
        rate,
        mode: s.spec.mode,
        path: s.spec.path,
        dataFile: s.spec.file ?? (s.spec.data === 'ids' ? corpus.idsFile : s.spec.data === 'bodies' ? bodiesFile : s.spec.data === 'import-bodies' ? importBodiesFile : undefined),
        keyPrefix: `bench-${t0}-${tag}`,
        serverPid: s.target === 'server' ? server.pid : baseline.pid,
        serverCore: Number(SERVER_CORE),
        loaderCore: Number(LOADER_CORE),
      });
      served[s.target] += r.requests;
      return r;
    };
    // Creates leave dirty pages that the kernel writes back while the next scenario runs: flush
    // the run database's files and pause, so that write-back is charged to the creates only.
    const settle = async (s: Scenario) => {
      if (s.spec.mode !== 'create') return;
      for (const f of [db, `${db}-wal`]) if (fs.existsSync(f)) fsyncFile(f);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    };
    log(`warming up ${scenarios.length} scenarios…`);
    for (const s of scenarios) {
      await runOne(s, 1, `warm-${s.name}`);
      await settle(s);
    }
    // get and its baseline are compared pairwise, and both start warm: before the first of the
    // pair, each process reads the sampled ids for a while. The OS cache is shared, but it does not
    // keep the pages for long (this VM's kernel pages out file pages left idle for ~30 s, and a
    // round is longer than that), and a 1 s warm-up of only the process about to run left the
    // first of each pair reading from disk (iowait 10-20% vs 2-4% for the second).
    const pair = scenarios.filter((x) => x.name === 'get' || x.name === 'baseline');
    for (let round = 0; round < rounds; round++) {
      for (const s of roundOrder(scenarios, round)) {
        if (pair.includes(s) && pair.every((x) => (raw[x.name]?.length ?? 0) === round)) {
          for (const x of pair) await runOne(x, 2, `rewarm-${round}-${x.name}`);
        }
        const r = await runOne(s, durationSec, `r${round}-${s.name}`);
        await settle(s);
        (raw[s.name] ??= []).push(r);
        log(`round ${round + 1}/${rounds} ${s.label.padEnd(36)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  loader ${r.loaderCpu}%  server ${r.serverCpu}%  iowait ${r.ioWaitOnServerCore}%  others: core ${SERVER_CORE} ${r.otherCpuOnServerCore}%, core ${LOADER_CORE} ${r.otherCpuOnLoaderCore}%`);
        // Right after the server's creates of a shape, the ceiling's (server and baseline stopped).
        const shape = CEILING_SHAPES[s.name];
        if (ceiling && shape) {
          const c = await ceiling.measure(shape, durationSec, `r${round}`, [server.pid, baseline.pid]);
          (ceilingRuns[s.name] ??= []).push(c);
          log(`round ${round + 1}/${rounds} in-process ceiling, ${shape.padEnd(27)} ${String(c.rps).padStart(7)} creates/s  (${Math.round((r.rps / c.rps) * 100)}% of it through the server)  transaction of 32: p50 ${c.txP50} ms  p99 ${c.txP99} ms  CPU ${c.cpu}%`);
        }
      }
    }
    // Open loop at half of the capacity just measured: the latency of a busy, not overloaded server.
    // Interleaved rounds like the saturated ones, and the median p99 over them, so that one hiccup
    // of a shared machine (a stalled generator, the host dropping the page cache) does not decide.
    const offered = new Map(
      scenarios.filter(isRated).map((s) => [s.name, Math.max(1, Math.round(RATED_SHARE * median((raw[s.name] ?? []).map((r) => r.rps))))] as const),
    );
    const ratedScenarios = scenarios.filter((s) => Number.isFinite(offered.get(s.name)));
    for (let round = 0; round < rounds; round++) {
      for (const s of roundOrder(ratedScenarios, round)) {
        const rate = offered.get(s.name)!;
        const r = await runOne(s, durationSec, `rated-${round}-${s.name}`, connections, rate);
        (rated[s.name] ??= []).push(r);
        log(`round ${round + 1}/${rounds} at ${RATED_SHARE * 100}% load ${s.label.padEnd(36)} offered ${rate} req/s, got ${r.rps} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  late p99 ${(r.lateP99 ?? NaN).toFixed(2)} ms  server ${r.serverCpu}%`);
        if (Math.abs(r.rps - rate) > 0.1 * rate)
          notes.push(`${s.label}: at ${RATED_SHARE * 100}% load ${r.rps} req/s were answered of ${rate} offered (more than 10% off: the generator could not keep up or requests failed)`);
      }
    }
    for (const s of ratedScenarios) {
      const late = median((rated[s.name] ?? []).map((r) => r.lateP99 ?? NaN));
      if (late > 5) notes.push(`${s.label}: at ${RATED_SHARE * 100}% load the generator issued requests up to ${late.toFixed(1)} ms late (median of the rounds' p99): the offered rate was bursty`);
    }
    // One connection, interleaved rounds too: the search target is judged here, with its spread.
    for (let round = 0; round < rounds; round++) {
      for (const s of roundOrder(scenarios, round)) {
        const r = await runOne(s, singleSec, `single-${round}-${s.name}`, 1);
        await settle(s);
        (single[s.name] ??= []).push(r);
        log(`round ${round + 1}/${rounds} 1 connection ${s.label.padEnd(36)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms`);
      }
    }
    if (runWrites) {
      writes = await measureWrites({
        db,
        size,
        before: libraryBefore,
        idsFile: corpus.idsFile,
        rounds,
        // Twice a saturation round: an edit can take 100 ms, and a p99 wants some 100 requests.
        seconds: durationSec * 2,
        run: (s, seconds, tag) => runOne(s, seconds, tag, 1),
        log,
      });
    }
    if (runStall) {
      signal(baseline.pid, 'SIGSTOP');
      try {
        stall = await measureStall(server, token, bodies, stallSec, 8, `${t0}`);
      } finally {
        signal(baseline.pid, 'SIGCONT');
      }
      log(`stall: ${JSON.stringify(stall)}`);
      notePeak('stall');
    }
    memory = memoryMb(server.pid);
  } finally {
    await stop(baseline);
    await stop(server);
    await ceiling?.close();
  }
  // Creates/s with --durability full and normal side by side (the servers above ran the default, full).
  let durability: DurabilityResults | undefined;
  if (scenarios.some((s) => s.spec.mode === 'create') && !opt['no-durability']) {
    log('creates with --durability full and normal…');
    durability = await measureDurability({ db, token, bodiesFile, rounds, durationSec, connections, keyPrefix: `bench-${t0}`, log });
  }

  const summaries = scenarios.map((s) => summarise(s.name, s.label, raw[s.name] ?? [], single[s.name] ?? [], rated[s.name] ?? []));
  const byName = new Map(summaries.map((s) => [s.name, s]));
  for (const s of summaries) {
    if (s.failures > 0) notes.push(`${s.label}: ${s.failures} non-2xx responses or connection errors`);
    if (s.loaderCpu >= 95) notes.push(`${s.label}: the load generator used ${s.loaderCpu}% of its core, so it may be the limit rather than the server`);
    if (s.otherCpu >= 10) notes.push(`${s.label}: other processes took a median ${s.otherCpu}% of the server's core during the runs (shared machine): figures are low by about that much`);
    if (s.ioWait >= 5) notes.push(`${s.label}: the server's core waited for the disk ${s.ioWait}% of the time (database pages not in the OS cache)`);
    if (s.otherCpuLoader >= 15 && s.serverCpu < 90 && s.ioWait < 5)
      notes.push(`${s.label}: other processes took ${s.otherCpuLoader}% of the generator's core and the server was only ${s.serverCpu}% busy: req/s is limited by the generator here; see req/s per server core`);
  }
  // Ratio per round (each get run next to its baseline run), then the median.
  const rounds2 = (raw.get ?? []).map((g, i) => [g, raw.baseline?.[i]] as const).filter((x): x is readonly [LoadResult, LoadResult] => !!x[1]);
  const ratio: BaselineRatio | null = rounds2.length
    ? {
        throughput: round2(median(rounds2.map(([g, b]) => g.rps / b.rps))),
        perCpu: round2(median(rounds2.map(([g, b]) => g.rps / g.serverCpu / (b.rps / b.serverCpu)))),
      }
    : null;
  const ceilingSummary = summariseCeiling(raw, ceilingRuns);
  const results: Results = {
    date: new Date().toISOString(),
    corpus: {
      size,
      generatorVersion: GENERATOR_VERSION,
      schemaHash: corpus.meta.schemaHash,
      dbMb: Math.round(fs.statSync(corpus.db).size / 2 ** 20),
      seedSeconds: round2(corpus.meta.seedMs / 1000),
      seedRatePerSec: Math.round(size / (corpus.meta.seedMs / 1000)),
      seededAt: corpus.meta.seededAt,
      reused: corpus.reused,
    },
    settings: { rounds, durationSec, connections, singleSec, ratedShare: RATED_SHARE, serverCore: SERVER_CORE, loaderCore: LOADER_CORE },
    machine: { ...machineInfo, loadAverageEnd: machine(sqliteVersion).loadAverage },
    server: { ...memory, peakSteps },
    scenarios: summaries,
    getVsBaseline: ratio,
    targets: { at: 1_000_000, checks: [...checkTargets(byName, memory.peakRssMb, ratio, rounds), ...coldStartTargets(coldStart), ...ceilingTargets(ceilingSummary), ...writeTargets(writes), ...stallTargets(stall), diskTarget(disk)] },
    disk,
    stall,
    coldStart,
    notes,
    raw,
    single,
    rated,
    durability,
    ceiling: ceilingSummary.length ? { summaries: ceilingSummary, raw: ceilingRuns } : undefined,
    writes,
  };
  printResults(results);
  if (!opt['no-write'] && !opt.only) writeResults(results, path.join(ROOT, 'bench'));
  if (opt['cpu-prof']) {
    console.log('\nserver ' + summariseProfile(path.join(profDir, 'server'), served.server));
    if (served.baseline > 0) console.log('\nbaseline ' + summariseProfile(path.join(profDir, 'baseline'), served.baseline));
  }
  for (const suffix of ['', '-wal', '-shm', '.secret', '.scrubbed']) fs.rmSync(db + suffix, { force: true });
  log(`\ndone in ${Math.round((Date.now() - t0) / 1000)} s`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(1);
});
