// The parts of the MCP SDK reclib uses, in one module, and every import of the SDK goes through it.
// The build makes it a program of its own (dist/mcp-sdk.program.cjs, build.mjs: `LAZY_PROGRAMS`),
// loaded with V8's code cache at the first MCP request or `reclib mcp`: the SDK, zod and ajv are
// ~480 KB of the ~1.17 MB the server's program was, text every start read and kept for no request
// but MCP's. Import it only with import(), or from modules imported so (tool-server.ts), so that
// nothing loads it before an MCP request needs it (test/e2e/lazy-programs.test.ts).
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export {
  CallToolRequestSchema,
  ErrorCode,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
