/**
 * A 2026-07-28 `tools/call` the client waits on, answered with the tool's result.
 */
import type { ToolSpec } from '../operations/tool-spec.ts';
import type { McpDeps } from './dialects/dialect.ts';
import type { RequestView } from './request-view.ts';
import { toCallToolResult } from './tool-result.ts';
import type { ServerContext } from '@modelcontextprotocol/server';

export async function modernSyncCall(tool: ToolSpec, args: Record<string, unknown>, view: RequestView, _ctx: ServerContext, deps: McpDeps): Promise<Record<string, unknown>> {
  const outcome = await deps.operations.runSync({
    ownerId: view.ownerId,
    tool,
    arguments: args,
    requestId: view.requestKey,
    clientCapabilities: view.clientCapabilities,
  });
  return toCallToolResult(outcome, tool);
}
