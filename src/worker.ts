// Background work that `reclib serve` starts with the HTTP server and drains on shutdown (the
// delivery scheduler, the index merger, the checkpointer). Defined here, below everything that
// implements or collects it, so that no module has to import the server to name it.

export interface Worker {
  start(): void;
  stop(): Promise<void>;
}
