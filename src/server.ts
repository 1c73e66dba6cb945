// `reclib serve`: the HTTP API and the background workers in one process, with a graceful stop.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import path from 'node:path';
import { DEFAULT_DB, type Config } from './config';
import { READER_CACHE_SIZE } from './db/open';
import { closeNoting, takeScrubMark } from './db/scrub-mark';
import { holdServeLock, type ServeLock } from './db/serve-lock';
import { createApp } from './http/app';
import { gracefulClose } from './http/graceful-close';
import { directRoutes } from './http/direct-routes';
import { createNodeServer } from './http/node-server';
import { observeRequests } from './http/request-observer';
import { logDelivery } from './observe/delivery-log';
import { loadMetrics } from './observe/load-metrics';
import { createLogger, type Logger } from './observe/log';
import { openRuntime } from './runtime';
import type { Services } from './services';
import type { DeliveryReport } from './delivery/scheduler';
import type { Worker } from './worker';
import { WriterThread } from './writer-thread';

export interface RunningServer {
  url: string;
  services: Services;
  logger: Logger;
  /** The thread that answers writes and runs the background work (absent for :memory:). */
  writerThread: WriterThread | undefined;
  close(): Promise<void>;
}

/**
 * How long a stop waits for requests and deliveries in flight before it closes what is left: under
 * the 10 s that `docker stop` and systemd give before SIGKILL, so the checkpoint and close still
 * happen. A delivery cut off here keeps its lease and is sent again after the next start.
 */
// Requests and deliveries get 7 s (+0.5 s for the workers), the checkpoint and close the rest:
// the process is gone within 8 s of the signal, inside the 10 s docker stop and systemd give (the
// checkpointer's last pass reads at most 32 MB: milliseconds from the OS's cache, under 2 s from
// an SD card).
const SHUTDOWN_GRACE_MS = 7_000;

export function firstRunHint(services: Services, config: Config, cli = cliCommand()): string | undefined {
  if (services.auth.hasAccounts()) return undefined;
  const db = config.db === DEFAULT_DB ? '' : ` --db ${shellWord(config.db)}`;
  // Where to open the web app: the public URL as the start-up line shows it (no credentials or
  // query); none when the server listens on every address and no public URL was set (the image's
  // 0.0.0.0 is not an address to open).
  const wildcard = config.host === '0.0.0.0' || config.host === '::';
  const appUrl = config.publicUrl !== undefined || !wildcard ? loggableUrl(services.core.config.publicUrl) : undefined;
  return [
    'No account yet. Create the first account, an API key and a session:',
    `  ${cli} accounts create --name me${db}`,
    `  ${cli} keys create${db} --account <account id> --name first-key --permissions recordings:create,recordings:read,recordings:write,recordings:delete,settings:read,settings:write,events:read`,
    `  ${cli} sessions create${db} --account <account id>`,
    // The web app signs in with a password, which the account above has not got.
    `To sign in to the web app${appUrl ? ` at ${appUrl}/` : ''} too, give the account a password:`,
    `  printf '%s\\n' '<a long passphrase>' | ${cli} accounts set-password${db} --account <account id> --password-stdin`,
  ].join('\n');
}

/** `word` as one word of a POSIX shell command line (quoted only when it needs to be). */
export const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/**
 * How the person who started this server runs its CLI, so that the first-run hint's commands can be
 * pasted as they are: `reclib` is on the PATH only for a global install. Inside the Docker image
 * (RECLIB_CONTAINER, which links `reclib` onto its PATH), `docker exec -i` from the host; through npx (npm sets
 * npm_command), npx again; from a checkout through tsx, tsx; else Node and the file it ran.
 */
export function cliCommand(argv1 = process.argv[1], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  // -i: the password command reads its standard input.
  if (env.RECLIB_CONTAINER === '1') return 'docker exec -i <container> reclib';
  if (argv1 === undefined) return 'reclib';
  const relative = path.relative(cwd, argv1);
  const file = shellWord(relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : argv1);
  if (/\.[cm]?ts$/.test(argv1)) return `npx tsx ${file}`;
  if (env.npm_command === 'exec') return 'npx reclib';
  if (path.basename(argv1) === 'reclib') return 'reclib';
  return `node ${file}`;
}

/** A container (Docker, Podman, or the image's RECLIB_CONTAINER): the listen address is not what clients use. */
export const inContainer = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env.RECLIB_CONTAINER === '1' || fs.existsSync('/.dockerenv') || fs.existsSync('/run/.containerenv');

/**
 * Starts the server. `log` receives the log's lines (several at once, joined by newlines): the
 * start-up line, one per request and per delivery outcome, in config.logFormat.
 */
export async function startServer(config: Config, log: (lines: string) => void = console.log): Promise<RunningServer> {
  const logger = createLogger(config.logFormat, (chunk) => log(chunk.replace(/\n$/, '')));
  // One server per database file (src/db/serve-lock.ts): a second one stops here, before it listens.
  const lock = holdServeLock(config.db);
  try {
    return await serve(config, logger, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function serve(config: Config, logger: Logger, lock: ServeLock): Promise<RunningServer> {
  // Before listening: from the listen callback to the app nothing may yield (see below).
  const buildMetrics = await loadMetrics(config);
  // The port is bound before the services are built, so the URL is known (with --port 0, the port
  // the system picked) and the config the services hold is final: fetchUrl and the cookie Origin
  // check read config.publicUrl, which defaults to that URL. No request is read before the app
  // exists: everything from the listen callback to `app = ...` below runs without yielding.
  let app: ReturnType<typeof createApp>['app'] | undefined;
  let onRequest: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let drain: ReturnType<typeof gracefulClose> | undefined;
  const observe = (req: IncomingMessage, res: ServerResponse) => {
    drain?.observe(req, res);
    onRequest?.(req, res);
  };
  const fetch = (...args: Parameters<NonNullable<typeof app>['fetch']>) => app!.fetch(...args);
  let direct: ReturnType<typeof directRoutes> | undefined;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createNodeServer(fetch, config.host, config, observe, (req, res, toApp) => direct?.(req, res, toApp) ?? false);
    drain = gracefulClose(s);
    s.once('error', reject);
    s.listen(config.port, config.host, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${hostForUrl}:${port}`;
  const publicUrlSet = config.publicUrl !== undefined;
  const resolved: Config = { ...config, publicUrl: config.publicUrl ?? url };
  let services: Services;
  try {
    services = openRuntime(resolved);
  } catch (e) {
    server.close();
    throw e;
  }
  // Writes go to the writer thread (src/writer-thread.ts) on a database file; an in-memory
  // database is one connection's own, so there everything runs here.
  const reportDelivery = (r: DeliveryReport) => {
    metrics?.delivery(r.outcome);
    logDelivery(logger, r);
  };
  // The note of the last stop, which says whether this start must go through the whole file
  // (src/db/scrub-mark.ts); only under the serve lock, where no other server takes or leaves it.
  const taken = resolved.db === ':memory:' || lock.unavailable ? undefined : takeScrubMark(resolved.db);
  const writerThread =
    resolved.db === ':memory:'
      ? undefined
      : new WriterThread(WriterThread.dataOf(resolved, services.core.masterSecret, taken), {
          committed: () => services.eventHub.othersCommitted(),
          delivery: reportDelivery,
          health: (status) => services.core.writer.health.mirror(status),
          log: (line) => logger.log('error', line),
        });
  // Two connections share the one page-cache budget (src/db/open.ts).
  if (writerThread) services.core.db.pragma(`cache_size = ${READER_CACHE_SIZE}`);
  const created = createApp(services, {
    ...(writerThread ? { writes: writerThread } : {}),
    ...(buildMetrics ? { metrics: buildMetrics(services.core) } : {}),
  });
  app = created.app;
  direct = directRoutes(created.deps, config.host);
  const { metrics } = created;
  const logRequest = observeRequests(logger, metrics);
  // The writer thread's idle work (index merging) waits until this thread is quiet too.
  onRequest = writerThread
    ? (req, res) => {
        writerThread.noteRequest();
        logRequest(req, res);
      }
    : logRequest;
  // With a writer thread, the background work that writes runs there; the event streams stay here.
  const workers: Worker[] = writerThread ? [services.eventHub, writerThread] : services.workers;
  services.webhooks.scheduler.onReport(reportDelivery);
  // The writer thread a little later, or at the first write (WriterThread.startSoon says why).
  for (const w of workers) {
    if (w === writerThread) writerThread.startSoon();
    else w.start();
  }
  startupLines(logger, resolved, url, firstRunHint(services, config), publicUrlSet);
  if (lock.unavailable) logger.log('warn', `serving without the lock that refuses a second reclib serve on this database (${lock.unavailable})`);
  logger.flush();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, answer what was received (Connection: close), drain the workers (the
      // scheduler waits for its sends), all bounded; then checkpoint and close the database.
      const drained = await Promise.race([
        Promise.all([drain?.close(SHUTDOWN_GRACE_MS), ...workers.map((w) => w.stop()), metrics?.stop()]).then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS + 500).unref()),
      ]);
      if (!drained) {
        logger.log('warn', `stopping after ${(SHUTDOWN_GRACE_MS + 500) / 1000} s with work in flight: a webhook delivery still on the wire keeps its lease and is sent again after the next start`);
      }
      // Every request has been answered (or cut off): the writer closes its connection first,
      // then its checkpointer makes its last pass.
      const scrubbed = await writerThread?.close();
      // The WAL copied and emptied, the connection closed; and the note for the next start when
      // every page is scrubbed (src/db/scrub-mark.ts: only this server may take or leave it).
      closeNoting(services.core.db, resolved.db, lock.unavailable ? undefined : scrubbed, taken);
      lock.release();
      logger.log('info', 'reclib stopped');
      logger.flush();
    })());
  return { url, services, logger, writerThread, close };
}

/** The public URL as logged: without a user name, password, query or fragment (none of which it needs). */
function loggableUrl(u: string | undefined): string | undefined {
  if (u === undefined) return undefined;
  const url = new URL(u);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url.href.replace(/\/$/, '');
}

/** The start-up line (URL, database, public URL, allow-list), the first-run hint, and the container warning. */
function startupLines(logger: Logger, config: Config, url: string, hint: string | undefined, publicUrlSet: boolean): void {
  const db = config.db === ':memory:' ? ':memory:' : path.resolve(config.db);
  const publicUrl = loggableUrl(config.publicUrl);
  const allow = config.allowList.entries;
  // The URL is followed by a space in both formats, so /reclib listening on (\S+)/ finds it.
  const msg = `reclib listening on ${url} (database ${db}, public URL ${publicUrl}, webhook allow-list ${allow.join(',') || 'none'})`;
  if (logger.format === 'json') logger.log('info', msg, { url, db, publicUrl, webhookAllow: allow, firstRunHint: hint });
  else logger.log('info', hint ? `${msg}\n${hint}` : msg);
  if (config.deliveries === 'off') {
    logger.log('warn', 'deliveries are off (--deliveries off): no webhook is sent, and what is queued stays queued for a server started with them on');
  }
  if (!publicUrlSet && inContainer()) {
    logger.log(
      'warn',
      `RECLIB_PUBLIC_URL is not set, and this looks like a container: text webhooks' fetchUrl and the cookie Origin check use ${url}, which clients outside the container cannot reach; set RECLIB_PUBLIC_URL to the address clients use (https://reclib.example.org)`,
    );
  }
}
