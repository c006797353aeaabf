/**
 * The cold-start reference: the smallest stateless MCP server the SDK makes, one tool, as a
 * fetch handler. The bundle bench builds it with our esbuild settings and imports it beside
 * our MCP bundle, so our module init is read as a ratio to the SDK's own, not a stopwatch.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

const mcp = createMcpHandler(() => {
  const server = new McpServer({ name: 'reference', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
});

/** The web-standard face, which a Lambda adapter would call. */
export const handler = (request: Request): Promise<Response> => mcp.fetch(request);
