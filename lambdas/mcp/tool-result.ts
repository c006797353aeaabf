/**
 * Execution output -> CallToolResult (DESIGN §3). An object that already has a
 * `content` array is used as is; anything else becomes a text block holding its JSON,
 * plus `structuredContent` when it is an object. With an `outputSchema` the output
 * must match it: a mismatch is our failure, not the caller's.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Outcome } from '../operations/operation.ts';
import type { ToolSpec } from '../operations/tool-spec.ts';
import { JSONRPC } from './json-rpc-errors.ts';
import { compileSchema, errorsText } from '../tools/json-schema.ts';

export interface CallToolResultShape {
  content: Array<{ type: 'text'; text: string } | Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** The CallToolResult for a finished operation; a protocol-error outcome throws it as a JSON-RPC error. */
export function toCallToolResult(outcome: Outcome, tool: ToolSpec): CallToolResultShape {
  switch (outcome.kind) {
    case 'protocol-error':
      throw new ProtocolError(outcome.code, outcome.message, outcome.data);
    case 'tool-error':
      return toolErrorResult(tool.name, outcome.error, outcome.cause);
    case 'result':
      return successResult(outcome.output, tool);
  }
}

/**
 * A tool failure as the model should read it: the error name and its cause. No
 * `structuredContent`: clients check it against the tool's outputSchema, which
 * describes success.
 */
export function toolErrorResult(toolName: string, error: string, cause?: string): CallToolResultShape {
  const lines = [`${toolName} failed.`, `Error: ${error}`, ...(cause ? [`Cause: ${readableCause(cause)}`] : [])];
  return { content: [{ type: 'text', text: lines.join('\n') }], isError: true };
}

/** Lambda failures carry a JSON cause; its errorMessage is what a person wants to read. */
function readableCause(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // A plain-text cause.
  }
  return cause;
}

function successResult(output: unknown, tool: ToolSpec): CallToolResultShape {
  if (isObject(output) && Array.isArray(output.content)) return output as CallToolResultShape;
  const result: CallToolResultShape = { content: [{ type: 'text', text: JSON.stringify(output) }] };
  if (isObject(output)) result.structuredContent = output;
  if (tool.outputSchema) {
    const validate = compileSchema(tool.outputSchema);
    if (!validate(output)) {
      throw new ProtocolError(
        JSONRPC.INTERNAL_ERROR,
        `Tool ${tool.name} produced output that does not match its outputSchema: ${errorsText(validate)}`,
      );
    }
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
