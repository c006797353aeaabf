/**
 * The spans an operation's trace is made of, named once: OpenTelemetry's MCP semantic
 * conventions for requests, and this project's names for the rest of an operation's life.
 */

/** `{mcp.method.name} {target}` (OpenTelemetry MCP conventions): the target is the tool or prompt name, when there is one. */
export function mcpSpanName(method: string, target?: string): string {
  return target ? `${method} ${target}` : method;
}

/** Attribute keys of OpenTelemetry's MCP, GenAI and JSON-RPC conventions. */
export const MCP_ATTRIBUTES = {
  method: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  sessionId: 'mcp.session.id',
  toolName: 'gen_ai.tool.name',
  operationName: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  errorType: 'error.type',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
} as const;

/** The tool an operation runs, on every span of its life after the request. */
export const TOOL_ATTRIBUTE = 'gen_ai.tool.name';

/** Set on the span that ends an operation (status sync's terminal write): its final status. */
export const OPERATION_END_ATTRIBUTE = 'async_mcp.operation.status';

/** The spans of an operation's life after its request. */
export const OPERATION_SPANS = {
  execution: (tool: string) => `execution ${tool}`,
  worker: (worker: string) => `invoke ${worker}`,
  /** A durable step by its order in the run: its name is the tool's, and may quote arguments. */
  step: (ordinal: number) => `step ${ordinal}`,
  questionAsked: 'question asked',
  questionAnswered: 'question answered',
  statusSync: 'status sync',
} as const;
