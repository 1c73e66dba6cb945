// The node server around a fetch handler on a free loopback port, for tests that need real sockets.
import type { AddressInfo } from 'node:net';
import { testConfig } from '../../src/config';
import { createNodeServer, type ConnectionTimeouts } from '../../src/http/node-server';

/** Listening on 127.0.0.1:<free port>; close() also ends connections left open. */
export async function listening(fetch: (request: Request) => Response | Promise<Response>, timeouts: ConnectionTimeouts = testConfig()) {
  const server = createNodeServer(fetch, '127.0.0.1', timeouts);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { server, port, close };
}
