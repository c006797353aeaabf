/**
 * Execution output -> CallToolResult (DESIGN §3). An object that already has a
 * `content` array is used as is; anything else becomes a text block holding its JSON,
 * plus `structuredContent` when it is an object. With an `outputSchema` the output
 * must match it: a mismatch is our failure, not the caller's.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Outcome } from '../operations/operation.ts';
import type { ToolSpec } from '../operations/tool-spec.ts';
import { isObject, parseJsonOrText } from '../shared/json-values.ts';
import { compileSchema, errorsText } from '../tools/json-schema.ts';
import { JSONRPC } from './json-rpc-errors.ts';

export interface CallToolResultShape {
  content: Array<{ type: 'text'; text: string } | Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/**
 * The CallToolResult for a finished operation. A protocol-error outcome throws the
 * JSON-RPC error the state machine chose; an internal-error outcome (our machinery
 * failed) throws -32603 with its message.
 */
export function toCallToolResult(outcome: Outcome, tool: ToolSpec): CallToolResultShape {
  switch (outcome.kind) {
    case 'protocol-error':
      throw new ProtocolError(outcome.code, outcome.message, outcome.data);
    case 'internal-error':
      throw new ProtocolError(JSONRPC.INTERNAL_ERROR, outcome.message);
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
  const readable = cause === undefined ? undefined : publicCause(cause, error);
  const lines = [`${toolName} failed.`, `Error: ${error}`, ...(readable ? [`Cause: ${readable}`] : [])];
  return { content: [{ type: 'text', text: lines.join('\n') }], isError: true };
}

/**
 * What a client may read of a failure's Cause. A Lambda worker's Cause is JSON
 * `{ errorType, errorMessage, trace }`, and in AWS the trace holds source paths: only the
 * message goes out, after the type when the failure's `error` name does not already say it.
 * Other JSON causes lose any `trace` or `stackTrace`; a plain-text cause is what the
 * state machine's author wrote.
 */
export function publicCause(cause: string, error?: string): string {
  const parsed = parseJsonOrText(cause);
  if (!isObject(parsed)) return cause;
  const { errorType, errorMessage, trace: _trace, stackTrace: _stackTrace, ...rest } = parsed;
  if (typeof errorMessage === 'string') return typeof errorType === 'string' && errorType !== error ? `${errorType}: ${errorMessage}` : errorMessage;
  if (typeof errorType === 'string' && Object.keys(rest).length === 0) return errorType;
  return JSON.stringify(typeof errorType === 'string' ? { errorType, ...rest } : rest);
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
