// Builds the whole in-process system from a Config: database, clock, master secret, services.
// The server and every CLI command start here, so both see the same file the same way.
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import type { Core } from './context';
import { Checkpointer } from './db/checkpointer';
import { openDatabase, type FileIdentity } from './db/open';
import { Writer } from './db/writer';
import { loadMasterSecret } from './master-secret';
import { createServices, type Services } from './services';

/** The writer thread's runtime: the server's main thread has the same file open in this process. */
export interface WriterThreadRuntime {
  /** Core.requestsElsewhere: the main thread's requests in progress. */
  requestsElsewhere: () => number;
  /** The file the main thread opened (OpenOptions.openInProcess). */
  file: FileIdentity;
}

export function openRuntime(config: Config, clock: Clock = systemClock, masterSecret?: Buffer, writerThread?: WriterThreadRuntime): Services {
  const db = openDatabase(config.db, { durability: config.durability, ...(writerThread ? { openInProcess: writerThread.file } : {}) });
  const core: Core = {
    db,
    writer: new Writer(db, undefined, clock),
    clock,
    config,
    masterSecret: masterSecret ?? loadMasterSecret(config.db === ':memory:' ? ':memory:' : config.masterSecretFile),
    ...(writerThread ? { requestsElsewhere: writerThread.requestsElsewhere } : {}),
  };
  const services = createServices(core);
  // Started (with the other workers) only by `serve`; CLI commands write too little to need it.
  if (config.db !== ':memory:') {
    const checkpointer = new Checkpointer(config.db, db);
    // A deleted recording's text leaves the WAL file too, shortly after the delete commits.
    services.recordings.onChange((before, after) => {
      if (before && before.deleted_at === null && after.deleted_at !== null) core.writer.onCommit(() => checkpointer.eraseSoon());
    });
    services.workers.push(checkpointer);
  }
  return services;
}
