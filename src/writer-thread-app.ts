// The writer thread's work (loaded by src/writer-thread-worker.ts): the services and the app on a
// connection of their own, answering the write requests the main thread hands over, and running
// the background work that writes (delivery scheduler, index merger, checkpointer). Its app has no
// rate limit (the main thread counted the request) and no /metrics (the main thread serves it).
import type { MessagePort } from 'node:worker_threads';
import { systemClock } from './clock';
import type { Config } from './config';
import { Checkpointer } from './db/checkpointer';
import { WRITER_CACHE_SIZE } from './db/open';
import { WalSync } from './db/wal-sync';
import { MAX_GROUP } from './db/writer';
import { GroupGate, SIGNAL } from './group-gate';
import { parseAllowList } from './delivery/destination-guard';
import { createApp } from './http/app';
import type { ForwardedRequest } from './http/env';
import { callError, postBatch, WRITE_CALLS, type WriteCallName } from './http/write-calls';
import { openRuntime } from './runtime';
import type { CallOutcome, FromWriter, ToWriter, WriterThreadData } from './writer-thread';

/** Opens the connection, starts the background work; returns the handler of the main thread's messages. */
export function startWriter(port: MessagePort, data: WriterThreadData): (m: ToWriter) => void {
  const send = (m: FromWriter, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  const config: Config = { ...data.config, allowList: parseAllowList(data.config.webhookAllow), rateLimit: 0, metricsToken: undefined };
  const signals = new Int32Array(data.signals);
  const services = openRuntime(config, systemClock, Buffer.from(data.masterSecret), { requestsElsewhere: () => Atomics.load(signals, SIGNAL.activity), file: data.file });
  services.core.db.pragma(`cache_size = ${WRITER_CACHE_SIZE}`);
  const { app } = createApp(services);
  const { writer } = services.core;
  // --durability full: the WAL's fsync after each group is made here, off this thread, instead of
  // inside COMMIT (src/db/wal-sync.ts), so the next group commits while the disk flushes the last.
  const walSync = config.durability === 'full' ? new WalSync(services.core.db.name) : undefined;
  if (walSync) {
    services.core.db.pragma('synchronous = NORMAL');
    writer.syncCommitsWith(walSync);
  }

  // One message per turn, however many transactions committed in it.
  let commitPosted = false;
  writer.afterEachCommit(() => {
    if (commitPosted) return;
    commitPosted = true;
    queueMicrotask(() => {
      commitPosted = false;
      send({ type: 'commit' });
    });
  });
  writer.health.onChange((status) => send({ type: 'health', status }));
  services.webhooks.scheduler.onReport((report) => send({ type: 'delivery', report }));

  // The event hub serves streams, which the main thread holds; everything else here writes.
  const workers = services.workers.filter((w) => w !== services.eventHub);
  const checkpointer = workers.find((w) => w instanceof Checkpointer);
  if (checkpointer && data.scrubbed) checkpointer.scrubbed = data.scrubbed;
  for (const w of workers) w.start();
  send({ type: 'ready', workers: workers.map((w) => w.constructor.name) });

  const answer = async (id: number, request: ForwardedRequest): Promise<void> => {
    try {
      // The body goes beside the Request, not in it (read by src/http/body.ts): a Request with a
      // body wraps it in a ReadableStream that the app then reads back chunk by chunk, which was
      // ~10% of this thread's time on creates.
      const res = await app.fetch(new Request(request.url, { method: request.method, headers: request.headers }), { forwardedBody: request.body ?? null });
      const body = new Uint8Array(await res.arrayBuffer());
      send({ type: 'answer', id, answer: { status: res.status, headers: [...res.headers], body } }, [body.buffer]);
    } catch (e) {
      send({ type: 'failed', id, message: (e as Error).message });
    }
  };

  // The results of one group commit go back in one message, not one each: the main thread runs at
  // a higher priority, so each message woke it and it took the core from this thread, once per
  // member of a group.
  let results: CallOutcome[] = [];
  const flushResults = () => {
    const batch = results;
    results = [];
    if (batch.length === 0) return;
    postBatch(
      batch,
      (results) => send({ type: 'results', results }),
      (r, e) => send({ type: 'results', results: [{ type: 'refused', id: r.id, error: callError(e) }] }),
    );
  };
  const settle = (r: CallOutcome) => {
    if (results.length === 0) setImmediate(flushResults);
    results.push(r);
  };
  const call = async (id: number, name: WriteCallName, args: unknown[]): Promise<void> => {
    try {
      settle({ type: 'result', id, value: await (WRITE_CALLS[name] as (s: typeof services, ...a: unknown[]) => unknown)(services, ...args) });
    } catch (e) {
      settle({ type: 'refused', id, error: callError(e) });
    }
  };

  // Under concurrent writes, a group waits for the members the main thread is about to hand over.
  const gate = new GroupGate(signals, MAX_GROUP, flushResults);
  writer.holdGroupsWith(gate);

  return (m: ToWriter) => {
    if (m.type === 'request') {
      gate.receivedWrites(1);
      void answer(m.id, m.request);
    } else if (m.type === 'calls') {
      gate.receivedWrites(m.calls.length);
      for (const c of m.calls) void call(c.id, c.name, c.args);
    } else if (m.type === 'stop') {
      // The checkpointer goes on through the stop's drain, and ends at the close, after the last write.
      void Promise.all(workers.map((w) => (w === checkpointer ? undefined : w.stop()))).then(() => send({ type: 'stopped' }));
    } else if (m.type === 'close') {
      // Calls that committed are answered before the thread ends: those waiting for the WAL's
      // fsync once it is done, in the turn after their promises settled. No group starts in
      // that turn (it would commit and not be answered).
      writer.stopGroups();
      writer.settleNow();
      setImmediate(() => {
        flushResults();
        // Closed first, so that nothing here (a delivery still on the wire, a retried key use)
        // writes after the checkpointer's last pass, which scrubs what the last writes left. A
        // close that failed leaves the file to the next start's whole-file pass.
        let closed = true;
        try {
          services.core.db.close();
        } catch {
          closed = false;
        }
        try {
          walSync?.close();
        } catch {
          // Its descriptor only.
        }
        void (checkpointer?.finish() ?? Promise.resolve(undefined))
          .catch(() => undefined)
          .then((finished) => {
            send({ type: 'closed', ...(closed && finished?.clean ? { scrubbed: finished } : {}) });
            process.exit(0);
          });
      });
    }
  };
}
