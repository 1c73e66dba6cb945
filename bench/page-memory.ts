// `npm run bench:pages [-- --rounds 3]`: the memory case of CONTRACT §12. A fresh library of 100
// recordings with 1 MB transcripts; 4 clients at once ask for `limit=100` pages (one of them reads
// a few bytes and then stops reading), while a probe asks /healthz every 5 ms. Reports the server's
// peak RSS and the probe's latencies per round, and judges them against the targets (RSS ≤ 300 MB,
// every /healthz ≤ 50 ms). Not a test: CI does not run it. BENCH_CPU_PROF=DIR writes the server's
// CPU profile there; BENCH_SETTLE_MS=N waits N ms after the creates (index merging) before measuring.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, cli, memoryMb, startServer, stop } from './processes';

const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Math.max(1, Math.min(10, Number(opt.rounds) || 3));
const RECORDINGS = 100;
const TRANSCRIPT = `${'the quick brown fox jumps over the lazy dog '.repeat(23_800)}end`; // ~1 MB
const TARGET_RSS_MB = 300;
const TARGET_PROBE_MS = 50;

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/**
 * The /healthz probe runs in a process of its own: in this one, reading three 4 MB pages would
 * delay its timers and count the client's own work as the server's stall.
 */
function startProbe(url: string): { ready: Promise<void>; stop(): Promise<number[]> } {
  const code = `
    const url = process.argv[1]; const took = []; let on = true;
    process.on('message', () => { on = false; });
    (async () => {
      await (await fetch(url + '/healthz')).text(); // warm: the first fetch of a process sets up its client
      process.send('ready');
      while (on) {
        const t = performance.now();
        await (await fetch(url + '/healthz')).text();
        took.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
      process.send(took);
      process.disconnect();
    })();`;
  const child = fork('-e', [code, url], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages: unknown[] = [];
  let wake: (() => void) | undefined;
  child.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  const next = () => new Promise<unknown>((resolve) => {
    const take = () => (messages.length > 0 ? resolve(messages.shift()) : (wake = take));
    take();
  });
  return {
    ready: next().then(() => undefined),
    stop: async () => {
      child.send('stop');
      return (await next()) as number[];
    },
  };
}

/** Reads `bytes` of a page and then stops reading, keeping the socket open until `release`. */
function stalledReader(url: URL, token: string, bytes: number): { release: () => void } {
  const socket = net.connect(Number(url.port), url.hostname);
  socket.write(`GET /api/v2/recordings?limit=100 HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  let got = 0;
  socket.on('data', (c: Buffer) => {
    got += c.length;
    if (got >= bytes) socket.pause();
  });
  socket.on('error', () => undefined);
  return { release: () => socket.destroy() };
}

async function main() {
  await build();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-pages-'));
  const db = path.join(dir, 'reclib.db');
  const account = await cli<{ account: { id: string } }>(['accounts', 'create', '--db', db, '--name', 'bench']);
  const key = await cli<{ secret: string }>(['keys', 'create', '--db', db, '--account', account.account.id, '--name', 'b', '--permissions', 'recordings:create,recordings:read']);
  const server = await startServer(db, process.env.BENCH_CPU_PROF);
  const url = new URL(server.url);
  const auth = { authorization: `Bearer ${key.secret}` };
  try {
    for (let i = 0; i < RECORDINGS; i++) {
      const res = await fetch(`${server.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `page-${i}` },
        body: JSON.stringify({ type: 'memo', title: `long ${i}`, transcript: TRANSCRIPT }),
      });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    }
    if (process.env.BENCH_SETTLE_MS) await new Promise((res) => setTimeout(res, Number(process.env.BENCH_SETTLE_MS)));
    const baseRss = memoryMb(server.pid).rssMb;
    // The same probe with no page readers: what the machine alone does to it (a shared VM).
    const idle = startProbe(server.url);
    await idle.ready;
    await new Promise((res) => setTimeout(res, 1_500));
    const idleProbe = await idle.stop();
    const results: Array<{ peakRssMb: number; probeP99: number; probeMax: number; pageBytes: number; pageCount: number }> = [];
    for (let r = 0; r < rounds; r++) {
      const prober = startProbe(server.url);
      await prober.ready;
      const stalled = stalledReader(url, key.secret, 64 * 1024);
      const pages = await Promise.all(
        [0, 1, 2].map(async () => {
          const res = await fetch(`${server.url}/api/v2/recordings?limit=100`, { headers: auth });
          const text = await res.text();
          return { bytes: text.length, count: text.split('"id":"rec_').length - 1 };
        }),
      );
      await new Promise((res) => setTimeout(res, 500));
      const probe = await prober.stop();
      stalled.release();
      results.push({
        peakRssMb: memoryMb(server.pid).peakRssMb,
        probeP99: Math.round(percentile(probe, 99) * 10) / 10,
        probeMax: Math.round(Math.max(...probe) * 10) / 10,
        pageBytes: pages[0]!.bytes,
        pageCount: pages[0]!.count,
      });
    }
    console.log(`page memory: ${RECORDINGS} recordings of ${(TRANSCRIPT.length / 1e6).toFixed(2)} MB, 3 readers + 1 stalled reader of limit=100 pages, /healthz every 5 ms`);
    console.log(`server RSS before the rounds: ${baseRss} MB; /healthz alone (no readers, same probe): p99 ${percentile(idleProbe, 99).toFixed(1)} ms, max ${Math.max(...idleProbe).toFixed(1)} ms`);
    console.log('| round | page (recordings, bytes) | peak RSS MB | /healthz p99 ms | /healthz max ms |');
    console.log('| ---: | ---: | ---: | ---: | ---: |');
    results.forEach((x, i) => console.log(`| ${i + 1} | ${x.pageCount}, ${x.pageBytes.toLocaleString('en')} | ${x.peakRssMb} | ${x.probeP99} | ${x.probeMax} |`));
    const peak = Math.max(...results.map((x) => x.peakRssMb));
    const worst = Math.max(...results.map((x) => x.probeMax));
    console.log(`peak RSS ${peak} MB (target ≤ ${TARGET_RSS_MB}): ${peak <= TARGET_RSS_MB ? 'pass' : 'FAIL'}`);
    console.log(`longest /healthz ${worst} ms (target ≤ ${TARGET_PROBE_MS}): ${worst <= TARGET_PROBE_MS ? 'pass' : 'FAIL'}`);
  } finally {
    await stop(server);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
