// The MCP SDK's own client against a harness served on a real socket (port 0), for the /mcp tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Harness } from './harness';
import { listening } from './node-server';

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serves the harness's app on 127.0.0.1 at a free port. */
export async function serve(h: Harness): Promise<Served> {
  const { port, close } = await listening(h.app.fetch, h.config);
  return { url: `http://127.0.0.1:${port}`, close };
}

/** An SDK client connected to URL/mcp with the token as its bearer credential. */
export async function mcpClient(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'reclib-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read the tools' shapes
  isError?: boolean;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallResult> {
  return (await client.callTool({ name, arguments: args })) as CallResult;
}

/** The one text content of a result. */
export function textOf(r: CallResult): string {
  const texts = r.content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
  if (texts.length !== 1) throw new Error(`expected one text content, got ${JSON.stringify(r.content)}`);
  return texts[0]!;
}
