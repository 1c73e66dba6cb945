// `reclib serve`
import type { Command } from 'commander';
import { ConfigError, DEFAULT_DB, loadConfig, type ConfigFlags } from '../config';
import { firstRunHint, startServer } from '../server';
import { fail, print, report } from './output';
import { keepServing, writable } from './output-errors';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('start the HTTP API and the webhook delivery scheduler')
    .option('--db <file>', `SQLite database file (RECLIB_DB; default ${DEFAULT_DB})`)
    .option('--host <host>', 'listen address (RECLIB_HOST; default 127.0.0.1)')
    .option('--port <n>', 'listen port, 0 picks a free one (RECLIB_PORT or PORT; default 8080)')
    .option('--public-url <url>', 'public origin used for fetchUrl (RECLIB_PUBLIC_URL; default http://HOST:PORT)')
    .option('--webhook-allow <list>', 'hostnames and CIDRs exempt from the public-HTTPS-443 rule (RECLIB_WEBHOOK_ALLOW)')
    .option('--delivery-backoff-ms <n>', 'first retry delay, doubling each attempt (RECLIB_DELIVERY_BACKOFF_MS; default 60000)')
    .option('--delivery-per-minute <n>', 'deliveries claimed per minute (RECLIB_DELIVERY_PER_MINUTE; default 20)')
    .option('--delivery-concurrency <n>', 'deliveries in flight at once (RECLIB_DELIVERY_CONCURRENCY; default 4)')
    .option('--delivery-timeout-ms <n>', 'HTTP timeout per delivery (RECLIB_DELIVERY_TIMEOUT_MS; default 5000)')
    .option('--rate-limit <n>', 'requests per minute per credential, 0 = off (RECLIB_RATE_LIMIT; default 120)')
    .option('--master-secret-file <file>', 'master secret for webhook secrets (RECLIB_MASTER_SECRET_FILE; default <db>.secret)')
    .option('--headers-timeout-ms <n>', 'a request line and headers must arrive within this (RECLIB_HEADERS_TIMEOUT_MS; default 10000)')
    .option('--request-timeout-ms <n>', 'a whole request, body included, must arrive within this (RECLIB_REQUEST_TIMEOUT_MS; default 30000)')
    .option('--keep-alive-timeout-ms <n>', 'an idle kept-alive connection is closed after this (RECLIB_KEEP_ALIVE_TIMEOUT_MS; default 5000)')
    .option('--idle-timeout-ms <n>', 'a connection where nothing moves either way is closed after this (RECLIB_IDLE_TIMEOUT_MS; default 60000)')
    .option('--deliveries <on|off>', 'off: send no webhook deliveries, they stay queued (a restored copy looked at beside production) (RECLIB_DELIVERIES; default on)')
    .option('--durability <mode>', 'full: an acknowledged write survives power loss; normal: survives a crash of the process (RECLIB_DURABILITY; default full)')
    .option('--metrics-token <token>', 'serve GET /metrics to Authorization: Bearer <token>; unset: /metrics is a 404 (RECLIB_METRICS_TOKEN)')
    .option('--log-format <format>', 'text or json: one line per request and per delivery outcome (RECLIB_LOG_FORMAT; default text)')
    .option('--json', 'print one JSON object once listening: {"serve":{"url","firstRunHint"}}; other lines go to stderr')
    .action(async (opts: ConfigFlags & { json?: boolean }) => {
      // A log that cannot be written (a closed pipe, a full disk) drops its lines; the server goes on.
      keepServing({ warnOnStdout: !opts.json });
      try {
        const config = loadConfig(opts);
        // With --json, stdout carries exactly one JSON object (docs/decisions.md §2); the rest goes to stderr.
        // process.stdout.write rather than console.log, which formats its argument and adds and
        // removes an 'error' listener on every call: 3-7 µs against 0.1-0.8 µs a write to a pipe
        // (measured alone, 20,000 writes); the log writes request lines together, at most 20 ms
        // after the first (src/observe/log.ts). Same bytes (console.log adds "\n").
        const out = opts.json ? process.stderr : process.stdout;
        const say = (line: string) => void (writable(out) && out.write(`${line}\n`));
        // With --json the log (start-up line included) goes to stderr with the other lines.
        const server = await startServer(config, say);
        if (opts.json) print(opts, { serve: { url: server.url, firstRunHint: firstRunHint(server.services, config) ?? null } }, '');
        const stop = (signal: string) => {
          server.logger.log('info', `reclib: ${signal} received, finishing in-flight work`);
          server.logger.flush();
          server.close().then(() => process.exit(0), () => process.exit(1));
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        // Text as before; with --json the error object every command prints (CONTRACT §12).
        if (err.code === 'EADDRINUSE') report('address_in_use', `cannot listen: ${err.message}`, 1);
        if (err.code === 'EACCES') report('listen_not_permitted', `cannot listen: ${err.message}`, 1);
        // Code as restore's for the same cause.
        if (err.code === 'RECLIB_SERVE_LOCKED') report('database_in_use', `cannot serve: ${err.message}`, 1);
        // A host that names no address of this machine is a setting to fix, like a bad port: exit 2.
        // (EAI_AGAIN, a name server not answering yet at boot, is not: it exits 1 as before.)
        if (err.code === 'ENOTFOUND' || err.code === 'EADDRNOTAVAIL') {
          const host = (err as { hostname?: string; address?: string }).hostname ?? (err as { address?: string }).address ?? '';
          fail(new ConfigError(`invalid configuration (--host): cannot listen on "${host}": not an address of this machine (${err.code})`));
        }
        fail(e);
      }
    });
}
