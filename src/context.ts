// What every service is built from: one database, its writer, one clock, the config and the
// master secret (webhook secrets are derived from it).
import type { Clock } from './clock';
import type { Config } from './config';
import type { Db } from './db/open';
import type { Resolver } from './delivery/destination-guard';
import type { Writer } from './db/writer';
import type { Timers } from './timers';

export interface Core {
  db: Db;
  writer: Writer;
  clock: Clock;
  config: Config;
  masterSecret: Buffer;
  /** DNS for webhook destinations (creation and sending); the system resolver when absent. Tests inject one. */
  resolver?: Resolver;
  /** Repeating timers (event-stream pings); the system's when absent. Tests inject fake ones. */
  timers?: Timers;
  /**
   * On the writer thread: how many requests the main thread has answered so far (a shared
   * counter), so that its idle work (the index merger) sees that the server is busy.
   */
  requestsElsewhere?: () => number;
}
