// The stall measurement of issue 14 point 1: searches, creates, edits and deletes mixed over 8
// connections for a while, and meanwhile
// - an outside GET /healthz probe every 5 ms (from this process: its latency also contains this
//   process's own delays, so it is an upper bound), and
// - the server's own event-loop delay histogram (bench/loop-delay.mjs, read with SIGUSR2).
// Every write touches indexed text, as in the issue. Not autocannon: edits and deletes need the id
// and revision their own create answered.
import type { Served } from './processes';

export interface StallResult {
  seconds: number;
  connections: number;
  /** Requests answered per kind, and those that were not 2xx. */
  ops: Record<string, { count: number; failures: number; p99: number; max: number }>;
  probe: { count: number; p99: number; p999: number; max: number };
  /** The server's event-loop delay over the run (ms); null when the line was not seen. */
  loop: { max: number; p999: number; p99: number; mean: number } | null;
}

const KINDS = ['search', 'create', 'edit', 'delete'] as const;

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
};

export async function measureStall(server: Served, token: string, bodies: unknown[], seconds: number, connections = 8, tag = `${Date.now()}`): Promise<StallResult> {
  const auth = { authorization: `Bearer ${token}` };
  const latencies: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));
  const failures: Record<string, number> = Object.fromEntries(KINDS.map((k) => [k, 0]));
  // Reset the server's histogram (its line is skipped below), so that it covers this run only.
  process.kill(server.pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const deadline = performance.now() + seconds * 1000;
  let created = 0;

  /** Sends one request; its JSON body when it succeeded (2xx), else null. */
  const timed = async (kind: string, send: () => Promise<Response>): Promise<Record<string, unknown> | null> => {
    const t = performance.now();
    try {
      const res = await send();
      const body = await res.text();
      latencies[kind]!.push(performance.now() - t);
      if (res.status >= 300) {
        failures[kind]!++;
        return null;
      }
      return body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      failures[kind]!++;
      return null;
    }
  };

  const worker = async (w: number) => {
    const mine: Array<{ id: string; revision: number }> = [];
    for (let k = w; performance.now() < deadline; k++) {
      const kind = KINDS[k % KINDS.length]!;
      if (kind === 'search') {
        await timed(kind, () => fetch(`${server.url}/api/v2/recordings?q=project&limit=20`, { headers: auth }));
      } else if (kind === 'create' || mine.length === 0) {
        const body = bodies[created++ % bodies.length];
        const res = await timed('create', () =>
          fetch(`${server.url}/api/v2/recordings`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `stall-${tag}-${w}-${k}` },
            body: JSON.stringify(body),
          }),
        );
        const rec = res?.recording as { id: string; revision: number } | undefined;
        if (rec) mine.push({ id: rec.id, revision: rec.revision });
      } else if (kind === 'edit') {
        const rec = mine[mine.length - 1]!;
        const res = await timed(kind, () =>
          fetch(`${server.url}/api/v2/recordings/${rec.id}`, {
            method: 'PATCH',
            headers: { ...auth, 'content-type': 'application/json', 'if-match': `"${rec.revision}"` },
            body: JSON.stringify({ transcript: `edited ${k}: the project meeting moved to thursday, budget review after lunch` }),
          }),
        );
        const after = res?.recording as { revision: number } | undefined;
        if (after) rec.revision = after.revision;
      } else {
        const rec = mine.shift()!;
        await timed(kind, () => fetch(`${server.url}/api/v2/recordings/${rec.id}`, { method: 'DELETE', headers: { ...auth, 'if-match': `"${rec.revision}"` } }));
      }
    }
  };

  // The probe: one GET /healthz every 5 ms, none overlapping (a slow one delays the next).
  const probes: number[] = [];
  const probing = (async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      try {
        await (await fetch(`${server.url}/healthz`)).text();
      } catch {
        // counted by its latency alone
      }
      const took = performance.now() - t;
      probes.push(took);
      if (took < 5) await new Promise((resolve) => setTimeout(resolve, 5 - took));
    }
  })();

  await Promise.all([...Array.from({ length: connections }, (_, w) => worker(w)), probing]);
  const lines = () => [...server.log.join('').matchAll(/reclib-loop-delay (\{.*\})/g)].map((m) => m[1]!);
  const seen = lines().length;
  process.kill(server.pid, 'SIGUSR2');
  let loop: StallResult['loop'] = null;
  for (let i = 0; i < 40 && loop === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const all = lines();
    if (all.length > seen) loop = JSON.parse(all[all.length - 1]!) as StallResult['loop'];
  }
  return {
    seconds,
    connections,
    ops: Object.fromEntries(
      KINDS.map((k) => [k, { count: latencies[k]!.length, failures: failures[k]!, p99: percentile(latencies[k]!, 99), max: percentile(latencies[k]!, 100) }]),
    ),
    probe: { count: probes.length, p99: percentile(probes, 99), p999: percentile(probes, 99.9), max: percentile(probes, 100) },
    loop,
  };
}
