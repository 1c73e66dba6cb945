// Reads the .cpuprofile the server wrote (`--cpu-prof`) and lists where its time went: the top
// functions by self time and the share per area (our bundle, hono, better-sqlite3/SQLite, node).
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function area(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)' || fn === '(program)' || fn === '(root)') return fn;
  if (!url) return 'native (SQLite, JSON, crypto…)';
  if (url.startsWith('node:')) return 'node core (http, streams)';
  // dist/reclib.program.cjs and the worker files: ours, hono, valibot and better-sqlite3's JavaScript.
  if (/\/dist\/[^/]+\.[cm]js$/.test(url)) return 'reclib bundle (ours + hono + valibot + better-sqlite3 JS)';
  // The raw baseline, run from source, loads better-sqlite3 from node_modules.
  if (url.includes('better-sqlite3')) return 'better-sqlite3 JS';
  return path.basename(url);
}

/** `requests`: how many requests the process answered while profiled (0: show shares only). */
export function summariseProfile(dir: string, requests = 0, top = 25): string {
  if (!fs.existsSync(dir)) return `no profile in ${dir}`;
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) return `no .cpuprofile in ${dir} (did the server exit cleanly?)`;
  // With --import tsx there is a profile per thread; the main thread's is the largest.
  const file = files.map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(a).size - fs.statSync(b).size).pop()!;
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    if (a === '(idle)' || a === '(program)' || a === '(root)') continue;
    busy += us;
    const key = `${functionName || '(anonymous)'}  ${url ? `${path.basename(url)}:${lineNumber + 1}` : '(native)'}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const perReq = (us: number) => (requests > 0 ? `${(us / requests).toFixed(1).padStart(6)} µs/req  ` : '');
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%  ${perReq(us)}`;
  const head = `CPU profile ${path.relative(process.cwd(), file)}: ${(busy / 1e6).toFixed(1)} s busy` + (requests > 0 ? `, ${requests} requests, ${(busy / requests).toFixed(1)} µs CPU per request` : '');
  const lines = [head, 'by area (share of busy time):'];
  for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1])) if (!a.startsWith('(')) lines.push(`  ${pct(us)}  ${a}`);
  lines.push(`top ${top} functions by self time:`);
  for (const [k, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  return lines.join('\n');
}

// `npx tsx bench/profile.ts <dir>` summarises an existing profile directory.
if (process.argv[1]?.endsWith('profile.ts') && process.argv[2]) console.log(summariseProfile(process.argv[2], Number(process.argv[3] ?? 0)));
