// An MCP server (the SDK's low-level Server) for one authenticated caller. The high-level McpServer
// of the SDK takes zod schemas only; with the low-level one the tools keep our valibot schemas,
// announced as JSON Schema and checked with the same error wording as the HTTP API.
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, Server } from './sdk';
import { AppError } from '../errors';
import { jsonSchema } from '../http/openapi';
import { parseWith } from '../http/router';
import { can, type Principal } from '../permissions';
import type { Services } from '../services';
import { PAGE_BYTES } from '../services/recording-search';
import { TOOLS, type Tool, type ToolResult } from './tools';

export const SERVER_INFO = { name: 'reclib', version: '0.1.0' };

/**
 * The JSON Schema of a tool's arguments or result. Without "$schema": the dialect of MCP tool
 * schemas is 2020-12 by default, and the SDK client's validator (ajv's default draft) refuses a
 * schema that names 2020-12 explicitly.
 */
function toolSchema(schema: Tool['input']): { type: 'object'; [key: string]: unknown } {
  const { $schema: _dialect, ...rest } = jsonSchema(schema);
  return { ...rest, type: 'object' };
}

const byName = new Map(TOOLS.map((t) => [t.name, t]));
let listing: ReturnType<typeof listTools> | undefined;
const listTools = () =>
  TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: `${t.description} Needs the ${t.permission} permission.`,
    inputSchema: toolSchema(t.input),
    outputSchema: toolSchema(t.output),
    annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, idempotentHint: t.readOnly, openWorldHint: false },
  }));

const toolError = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

export interface ToolServerOptions {
  services: Services;
  principal: Principal;
  requestId: string;
  logError: (line: string) => void;
  /**
   * For a batch (several messages in one POST): how many characters of tool results it may still
   * answer with. Once spent, the batch's further calls are isError results saying to send them
   * alone: the whole batch is answered at once, and 100 list calls of 4 MB pages held gigabytes.
   */
  batchBudget?: { left: number };
}

/** Characters of tool results one batch may hold (two full pages: src/services/recording-search.ts PAGE_BYTES). */
export const BATCH_RESULT_CHARS = 2 * PAGE_BYTES;

/** About the size of a result as JSON: its text and its structured content. */
const resultChars = (r: ToolResult): number =>
  r.content.reduce((n, c) => n + c.text.length, 0) + (r.structuredContent ? JSON.stringify(r.structuredContent).length : 0);

/** Runs one tool call: permission, arguments, then the tool; what the caller can fix is an isError result. */
export async function callTool(name: string, args: unknown, o: ToolServerOptions): Promise<ToolResult> {
  const t = byName.get(name);
  if (!t) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; the tools are ${TOOLS.map((x) => x.name).join(', ')}`);
  if (!can(o.principal, t.permission)) {
    return toolError(`This credential lacks the ${t.permission} permission, which ${t.name} needs; use an API key that has ${t.permission}.`);
  }
  const budget = o.batchBudget;
  if (budget && budget.left <= 0) {
    return toolError(`This batch's results already hold about ${Math.round(BATCH_RESULT_CHARS / 1024 / 1024)} MB, its limit: send ${t.name} again in a POST of its own.`);
  }
  // Charged as soon as a result exists: the calls of a batch start one after another without
  // waiting for each other, and a synchronous tool (list, search, get) is done before the next starts.
  const charge = (r: ToolResult): ToolResult => {
    if (budget) budget.left -= resultChars(r);
    return r;
  };
  try {
    const out = t.run({ services: o.services, principal: o.principal }, parseWith('arguments', t.input, args ?? {}));
    return charge(out instanceof Promise ? await out : out);
  } catch (e) {
    if (e instanceof AppError) return toolError(e.message);
    // As app.ts onError: nothing about internals goes to the caller or the log line.
    const err = e as { name?: string; code?: string };
    o.logError(`reclib: internal error in MCP tool ${name} request=${o.requestId} ${err.name ?? 'Error'}${err.code ? ` ${err.code}` : ''}`);
    throw new McpError(ErrorCode.InternalError, `unexpected failure; quote request id ${o.requestId} when reporting it`);
  }
}

export function toolServer(o: ToolServerOptions): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      "reclib is the user's library of recorded voice clips and memos with their transcripts. " +
      'Search it with search_recordings, browse with list_recordings, read one with get_recording, save a note with create_note.',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: (listing ??= listTools()) }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callTool(request.params.name, request.params.arguments, o));
  return server;
}
