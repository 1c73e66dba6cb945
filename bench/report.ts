// Writes the figures: a table on stdout, bench/results-<size>.json and bench/results.md (quoted by the README).
import fs from 'node:fs';
import path from 'node:path';
import { diskText, type DiskUsage } from './disk';
import type { ColdStartResult } from './cold-start';
import type { DurabilityResults } from './durability';
import type { LoadResult } from './load';
import type { StallResult } from './stall';
import { GENERATOR_VERSION } from './corpus';
import { TARGET_SIZE, type BaselineRatio, type ScenarioSummary, type TargetCheck } from './stats';

/** The server's peak RSS (VmHWM) and RSS right after a phase of the bench that raised the peak. */
export interface PeakStep {
  after: string;
  peakRssMb: number;
  rssMb: number;
}

/** Where the peak grew, in words: "warm-up 142 MB, r0-create 171 MB (RSS 160), …". */
export const peakStepsText = (steps: PeakStep[] | undefined): string =>
  steps?.length ? ` It grew to that in steps, after: ${steps.map((x) => `${x.after} ${x.peakRssMb} MB (RSS ${x.rssMb})`).join(', ')}.` : '';

export interface Results {
  date: string;
  corpus: { size: number; generatorVersion: number; schemaHash: string; dbMb: number; seedSeconds: number; seedRatePerSec: number; seededAt: string; reused: boolean };
  /** ratedShare: the share of each scenario's saturated req/s offered open loop (absent in runs before that phase). */
  settings: { rounds: number; durationSec: number; connections: number; singleSec: number; ratedShare?: number; serverCore: string; loaderCore: string };
  machine: ReturnType<typeof import('./stats').machine> & { loadAverageEnd: number[] };
  /** peakSteps: what the server had just run each time its peak RSS grew by PEAK_STEP_MB or more (absent in older runs). */
  server: { peakRssMb: number; rssMb: number; peakSteps?: PeakStep[] };
  scenarios: ScenarioSummary[];
  getVsBaseline: BaselineRatio | null;
  targets: { at: number; checks: TargetCheck[] };
  notes: string[];
  raw: Record<string, LoadResult[]>;
  single: Record<string, LoadResult[]>;
  /** Open-loop runs at ratedShare of the saturated req/s (absent in runs before that phase). */
  rated?: Record<string, LoadResult[]>;
  /** Creates with --durability full and normal side by side (absent in runs before that phase). */
  durability?: DurabilityResults;
  /** The mixed-load stall measurement (absent in runs before it). */
  stall?: StallResult;
  /** Creates through the server vs the in-process ceiling, per shape (bench/ceiling.ts; absent before it). */
  ceiling?: { summaries: import('./write-targets').CeilingSummary[]; raw: Record<string, import('./ceiling').CeilingRun[]> };
  /** Edits and deletes with one connection (bench/edits.ts; absent before it). */
  writes?: import('./edits').WriteResults;
  /** Disk use of the seeded library (absent in runs before it). */
  disk?: DiskUsage;
  /** The bundle's cold start against `node -e 0` (absent in runs before it). */
  coldStart?: ColdStartResult;
}

const fmt = (n: number) => n.toLocaleString('en-US');
const ratioText = (b: BaselineRatio) =>
  `${b.throughput.toFixed(2)} × the throughput of a raw node:http + better-sqlite3 server running the same query ` +
  `(${b.perCpu.toFixed(2)} × per CPU-second; medians of per-round ratios, each pair run back to back)`;
// Results saved before a column existed lack the field: shown as '–' too.
const ms = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(2) : '–');
const pct = (r: Results) => `${Math.round((r.settings.ratedShare ?? 0.5) * 100)}%`;

function scenarioRows(r: Results): string[][] {
  return r.scenarios.map((s) => [
    s.label,
    fmt(s.rps),
    Number.isFinite(s.rpsPerCore) ? fmt(s.rpsPerCore) : '–',
    ms(s.p50),
    ms(s.p99),
    ms(s.p50Rated),
    ms(s.p99Rated),
    ms(s.p50At1),
    ms(s.p99At1),
  ]);
}

const HEAD = ['scenario', 'req/s', 'req/s per core', 'p50 ms', 'p99 ms', 'p50 ms, 50% load', 'p99 ms, 50% load', 'p50 ms, 1 conn', 'p99 ms, 1 conn'];

/** How each figure was obtained: spread, errors and what else used the machine. */
function diagnosticRows(r: Results): string[][] {
  return r.scenarios.map((s) => [
    s.label,
    `${fmt(s.rpsMin)}–${fmt(s.rpsMax)}`,
    String(s.failures),
    `${s.serverCpu}%`,
    `${s.ioWait}%`,
    `${s.otherCpu}% / ${s.otherCpuLoader}%`,
    `${s.loaderCpu}%`,
  ]);
}

const DIAG_HEAD = ['scenario', 'req/s range', 'non-2xx', 'server CPU', 'iowait', 'others (server/loader core)', 'loader CPU'];

export function textTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const mdTable = (head: string[], rows: string[][]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

const DURABILITY_HEAD = ['durability', 'creates/s', 'p50 ms', 'p99 ms', 'iowait'];
const durabilityRows = (d: DurabilityResults): string[][] =>
  d.modes.map((m) => [m.mode === 'full' ? 'full (default, synchronous=FULL)' : 'normal (synchronous=NORMAL)', fmt(m.rps), ms(m.p50), ms(m.p99), `${m.ioWait}%`]);
const durabilityText = (d: DurabilityResults) =>
  `Creates with --durability full run at ${Math.round(d.fullVsNormal * 100)}% of the rate with normal (medians of ${d.rounds} alternating rounds of ${d.durationSec} s, ${d.connections} connections, one server at a time).`;

/** A target's result; a row no target judges says so (a closed loop's p99 is queueing; the others are shown beside a judged figure). */
export const resultLabel = (c: TargetCheck): string =>
  c.pass === null ? (c.target.includes('(closed loop)') ? 'not judged (queueing)' : 'not judged') : c.pass ? 'pass' : 'FAIL';
export const targetRow = (c: TargetCheck): string[] => [c.target, c.required, c.measured, resultLabel(c)];
const targetRows = (r: Results) => r.targets.checks.map(targetRow);
const targetNote = (r: Results) =>
  r.corpus.generatorVersion !== GENERATOR_VERSION
    ? `This run predates the bounded search and the issue-14 scenarios (corpus generator v${r.corpus.generatorVersion}, the targets of issue 3 as that run checked them); it stays as the ${fmt(r.corpus.size)}-recording reference until the next run at that size:`
    : r.corpus.size === TARGET_SIZE ? `Targets (issue 14, at ${fmt(TARGET_SIZE)} recordings):` : `Targets (issue 14, defined at ${fmt(TARGET_SIZE)}; checked here at ${fmt(r.corpus.size)} for orientation):`;

/** The cold-start measurement in one sentence. */
const coldStartText = (c: ColdStartResult): string =>
  // Runs before V8's code cache (no firstStart) started dist/reclib.mjs, an ES module then.
  `Cold start (issue 14 point 5): \`${['node', ...(c.nodeFlags ?? []), `dist/reclib.${c.firstStart === undefined ? 'mjs' : 'cjs'} serve`].join(' ')}\` on this run's database, from spawn to the first 200 from GET /healthz, ` +
  `${c.server.median.toFixed(0)} ms (${c.server.range[0].toFixed(0)}–${c.server.range[1].toFixed(0)}); \`node -e 0\` from spawn to exit ` +
  `${c.node.median.toFixed(0)} ms (${c.node.range[0].toFixed(0)}–${c.node.range[1].toFixed(0)}); medians of ${c.pairs} alternating pairs, both pinned to core 0.` +
  (c.firstStart === undefined
    ? ''
    : ` The pairs start with V8's code cache (src/code-cache.ts), which the first start in an empty cache folder writes; that start, measured apart (what a first start without a cache costs; the build writes one for npm start): ${c.firstStart.toFixed(0)} ms.`) +
  (c.api
    ? ` Spawn to the first answer of an API request sent right after that /healthz (GET /api/v2/recordings?limit=1, which loads the node adapter the server defers past its first answers): ${c.api.median.toFixed(0)} ms (${c.api.range[0].toFixed(0)}–${c.api.range[1].toFixed(0)}).`
    : '');

/** The stall measurement in one paragraph. */
function stallText(s: StallResult): string {
  const ops = Object.entries(s.ops)
    .map(([k, o]) => `${k} ${fmt(o.count)} (p99 ${ms(o.p99)} ms, max ${ms(o.max)} ms${o.failures ? `, ${o.failures} failed` : ''})`)
    .join(', ');
  return (
    `Stall under mixed load (issue 14 point 1): ${s.seconds} s of searches, creates, edits and deletes (every write touches indexed text) at ${s.connections} connections: ${ops}. ` +
    `The server's event-loop delay (monitorEventLoopDelay, preloaded by bench/loop-delay.mjs): ${s.loop ? `max ${s.loop.max} ms, p99.9 ${s.loop.p999} ms, p99 ${s.loop.p99} ms` : 'not seen'}. ` +
    `A /healthz probe every 5 ms from the load process: ${fmt(s.probe.count)} probes, max ${ms(s.probe.max)} ms, p99.9 ${ms(s.probe.p999)} ms, p99 ${ms(s.probe.p99)} ms.`
  );
}

export function printResults(r: Results): void {
  const c = r.corpus;
  console.log(
    `\nreclib benchmark, ${fmt(c.size)} recordings (${c.dbMb} MB db), ${r.settings.rounds} rounds × ${r.settings.durationSec} s, ${r.settings.connections} connections; ` +
      `${pct(r)} load: open loop at ${pct(r)} of each scenario's saturated req/s`,
  );
  console.log(`${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node}, SQLite ${r.machine.sqlite}; server on core ${r.settings.serverCore}, load on core ${r.settings.loaderCore}`);
  console.log(`seeding: ${c.seedSeconds} s (${fmt(c.seedRatePerSec)}/s)${c.reused ? `, cached from ${c.seededAt}` : ''}\n`);
  console.log(textTable(HEAD, scenarioRows(r)));
  console.log('');
  console.log(textTable(DIAG_HEAD, diagnosticRows(r)));
  console.log(`\nserver memory: peak RSS ${r.server.peakRssMb} MB, RSS at end ${r.server.rssMb} MB.${peakStepsText(r.server.peakSteps)}`);
  if (r.getVsBaseline !== null) console.log(`get-by-id = ${ratioText(r.getVsBaseline)}`);
  if (r.durability) console.log(`\n${textTable(DURABILITY_HEAD, durabilityRows(r.durability))}\n${durabilityText(r.durability)}`);
  if (r.stall) console.log(`\n${stallText(r.stall)}`);
  if (r.disk) console.log(`\n${diskText(r.disk)}`);
  if (r.coldStart) console.log(`\n${coldStartText(r.coldStart)}`);
  console.log(`\n${targetNote(r)}`);
  console.log(textTable(['target', 'required', 'measured', 'result'], targetRows(r)));
  for (const n of r.notes) console.log(`note: ${n}`);
}

/** Little's law on this run's common-word search: the wait at saturation that the connection count alone implies. */
function littleExample(r: Results): string {
  const s = r.scenarios.find((x) => x.name === 'search-common');
  if (!s || !(s.rps > 0)) return '';
  return `; ${r.settings.connections} ÷ ${fmt(s.rps)} req/s ≈ ${((r.settings.connections / s.rps) * 1000).toFixed(1)} ms for the common-word search`;
}

const openLoopText = (r: Results) =>
  `The ${pct(r)} load columns are open loop: requests issued on a fixed schedule at ${pct(r)} of that scenario's saturated req/s over up to ${r.settings.connections} connections, ` +
  "whether or not earlier ones were answered (as wrk2 does; autocannon's overallRate sends each second's quota in one burst, so bench/open-loop.ts issues them): " +
  `the latency a request sees when the server is busy but not overloaded (median p99 of ${r.settings.rounds} interleaved rounds). `;

export function markdown(r: Results): string {
  const c = r.corpus;
  return [
    `## Benchmark (${fmt(c.size)} recordings)`,
    '',
    `Measured ${r.date.slice(0, 10)} with \`npm run bench${c.size === 100_000 ? '' : ` -- --size ${c.size}`}\`: ${r.machine.cpu}, ${r.machine.cores} cores, ` +
      `Node ${r.machine.node}, SQLite ${r.machine.sqlite}. Server pinned to core ${r.settings.serverCore}, the load generator to core ${r.settings.loaderCore}; ` +
      `${r.settings.rounds} interleaved rounds of ${r.settings.durationSec} s with ${r.settings.connections} connections (req/s and p50/p99 are medians over rounds), ` +
      (r.rated ? `then ${(Object.values(r.rated)[0] ?? []).length} interleaved rounds of ${r.settings.durationSec} s open-loop runs per read scenario at ${pct(r)} of its measured req/s, ` : '') +
      `then ${r.single && Object.values(r.single)[0] && Object.values(r.single)[0]!.length > 1 ? `${Object.values(r.single)[0]!.length} interleaved rounds of` : 'one'} ${r.settings.singleSec} s run${(Object.values(r.single)[0]?.length ?? 1) > 1 ? 's' : ''} per scenario with a single connection (latency without queueing). ` +
      `Database ${c.dbMb} MB; seeded through the service layer in ${c.seedSeconds} s (${fmt(c.seedRatePerSec)} recordings/s). ` +
      `Load average of the machine (1, 5, 15 min) at the start ${r.machine.loadAverage.join(', ')}, at the end ${(r.machine.loadAverageEnd ?? []).join(', ')} (2 cores).`,
    '',
    mdTable(HEAD, scenarioRows(r)),
    '',
    'req/s and p50/p99 are medians over the rounds with all connections at saturation (autocannon); ' +
      'req/s per core is req/s divided by the share of its core the server used (what one fully used core serves). ' +
      `At saturation each connection sends its next request as soon as the previous one is answered, so p50/p99 are mostly queueing behind the other ${r.settings.connections - 1} connections ` +
      `(Little's law: W ≈ connections ÷ throughput${littleExample(r)}, whatever the request costs). ` +
      (r.rated ? openLoopText(r) : '') +
      'The 1-connection columns are the latency of a request alone.',
    '',
    `<details><summary>How the figures were obtained (spread, CPU, disk, noise)</summary>\n\n${mdTable(DIAG_HEAD, diagnosticRows(r))}\n\n` +
      'Server CPU is the share of its core the answering process used during the runs (near 100%: it was the limit); ' +
      'iowait is the time the server core sat waiting for the disk; ' +
      "others is what other processes took on the server's / the generator's core (noise on a shared machine); loader CPU is the generator's own use." +
      '\n\n</details>',
    '',
    `Server memory: peak RSS ${r.server.peakRssMb} MB, RSS at the end ${r.server.rssMb} MB.${peakStepsText(r.server.peakSteps)}` +
      (r.getVsBaseline !== null ? ` Get-by-id = ${ratioText(r.getVsBaseline)}.` : ''),
    '',
    ...(r.durability ? [mdTable(DURABILITY_HEAD, durabilityRows(r.durability)), '', durabilityText(r.durability), ''] : []),
    ...(r.stall ? [stallText(r.stall), ''] : []),
    ...(r.disk ? [diskText(r.disk), ''] : []),
    ...(r.coldStart ? [coldStartText(r.coldStart), ''] : []),
    targetNote(r),
    '',
    mdTable(['target', 'required', 'measured', 'result'], targetRows(r)),
    ...(r.notes.length ? ['', ...r.notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
}

/** results-<size>.json keeps the latest run of each corpus size; results.md shows every size that has one, smallest first. */
export function writeResults(r: Results, dir: string): void {
  const json = JSON.stringify(r, null, 2) + '\n';
  fs.writeFileSync(path.join(dir, `results-${r.corpus.size}.json`), json);
  writeMarkdown(dir);
}

/** Rebuilds results.md from every results-<size>.json in dir, then the hand-written results-notes.md. */
export function writeMarkdown(dir: string): void {
  const all = fs
    .readdirSync(dir)
    .filter((f) => /^results-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Results)
    .sort((a, b) => a.corpus.size - b.corpus.size);
  const notesFile = path.join(dir, 'results-notes.md');
  const notes = fs.existsSync(notesFile) ? [fs.readFileSync(notesFile, 'utf8')] : [];
  fs.writeFileSync(path.join(dir, 'results.md'), ['# reclib benchmark results', '', 'Written by `npm run bench` (bench/run.ts).', '', ...all.map(markdown), ...notes].join('\n'));
}

// `npx tsx bench/report.ts` rebuilds bench/results.md from the saved runs (after a format change).
if (process.argv[1]?.endsWith('report.ts')) writeMarkdown(import.meta.dirname);
