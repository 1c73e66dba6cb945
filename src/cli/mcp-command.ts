// `reclib mcp --url URL` (docs/decisions.md §9): a stdio bridge for local assistants that start MCP servers
// as a child process. Each JSON-RPC message read from stdin is POSTed to URL/mcp with the key from
// RECLIB_API_KEY, and each reply is written to stdout: the SDK's StdioServerTransport on one side
// and its StreamableHTTPClientTransport on the other, so framing and HTTP details are the SDK's.
// Nothing but protocol goes to stdout; notes go to stderr. Ends when stdin closes.
import type { Command } from 'commander';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../config';
import { fail } from './output';

/** URL/mcp; a URL that already ends in /mcp is taken as the endpoint itself. */
export function mcpEndpoint(url: string): URL {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new ConfigError(`--url: "${url}" is not a URL; give the server's address, e.g. http://127.0.0.1:8080`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigError('--url: must be an http: or https: URL');
  const path = base.pathname.replace(/\/+$/, '');
  base.pathname = path.endsWith('/mcp') ? path : `${path}/mcp`;
  return base;
}

function apiKey(env: NodeJS.ProcessEnv): string {
  const key = env.RECLIB_API_KEY?.trim();
  if (!key) {
    throw new ConfigError('RECLIB_API_KEY is not set: put an API key (rlk_…) with recordings:read (and recordings:create for create_note) in it');
  }
  if (!/^rl[ks]_\S+$/.test(key)) throw new ConfigError('RECLIB_API_KEY does not hold a reclib API key (rlk_…) or session token (rls_…)');
  return key;
}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } => 'method' in m && 'id' in m;

async function bridge(endpoint: URL, key: string): Promise<void> {
  const { StdioServerTransport, StreamableHTTPClientTransport } = await import('../mcp/sdk');
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const inFlight = new Set<Promise<void>>();
  let initializeId: string | number | undefined;

  remote.onmessage = (message) => {
    // Later POSTs carry the negotiated protocol version, as the SDK's own client does.
    if (initializeId !== undefined && 'id' in message && message.id === initializeId && 'result' in message) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') remote.setProtocolVersion(version);
      initializeId = undefined;
    }
    void local.send(message);
  };
  remote.onerror = (e) => process.stderr.write(`reclib mcp: ${e.message}\n`);
  local.onerror = (e) => process.stderr.write(`reclib mcp: ignored a line on stdin that is not a JSON-RPC message (${e.message})\n`);
  local.onmessage = (message) => {
    if (isRequest(message) && message.method === 'initialize') initializeId = message.id;
    const sent = remote.send(message).catch((e: unknown) => {
      // fetch says only "fetch failed"; its cause says why (ECONNREFUSED: no server at that address).
      const cause = (e as { cause?: { code?: unknown } }).cause?.code;
      const reason = `reclib at ${endpoint.href} did not take the message: ${(e as Error).message}${typeof cause === 'string' ? ` (${cause})` : ''}`;
      process.stderr.write(`reclib mcp: ${reason}\n`);
      // The assistant waits for an answer to a request: give it one instead of silence.
      if (isRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: reason } });
    });
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  await remote.start();
  await local.start();
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  // Answers to what was already sent still reach stdout before the bridge ends.
  await Promise.allSettled([...inFlight]);
  await local.close();
  await remote.close();
}

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('stdio bridge to a reclib server\'s MCP endpoint for local assistants (key from RECLIB_API_KEY)')
    .requiredOption('--url <url>', 'the reclib server, e.g. http://127.0.0.1:8080 (messages go to URL/mcp)')
    .action(async (opts: { url: string }) => {
      try {
        await bridge(mcpEndpoint(opts.url), apiKey(process.env));
      } catch (e) {
        fail(e);
      }
    });
}
