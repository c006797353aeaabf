/** A plain, blocking `tools/call`: for tools that run only synchronously, in either framing. */
import type { CallToolResult } from '../call-handle.ts';
import type { McpConnection } from '../mcp-connection.ts';
import { CallToolResultSchema, modernToolCall, parseAnswer, progressMeta, type StartOptions } from './dialect-adapter.ts';

export type Era = 'modern' | 'legacy';

export async function callDirect(
  connection: McpConnection,
  era: Era,
  tool: string,
  args: Record<string, unknown>,
  options: StartOptions,
): Promise<CallToolResult> {
  const params = { name: tool, arguments: args, ...progressMeta(options) };
  const answer = era === 'modern' ? await modernToolCall(connection, params, options) : await connection.legacy('tools/call', params, options);
  const { resultType: _resultType, ...result } = parseAnswer(CallToolResultSchema, answer, 'tools/call');
  return result as CallToolResult;
}
