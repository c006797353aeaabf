/**
 * A finished operation's CallToolResult as the MCP side answers it (DESIGN §3): the shaping
 * itself is in result-shaping.ts, free of the MCP SDK so status sync can use it; here its
 * failures become the JSON-RPC errors a client reads. An output that fails the checks is
 * our failure, not the caller's: -32603.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { Outcome } from '../../operations/operation.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { type CallToolResultShape, InvalidToolOutput, type ShapingTool, storedResult, successResult, toolErrorResult } from './result-shaping.ts';

export {
  type CallToolResultShape,
  callToolResultProblem,
  publicCause,
  type ShapingTool,
  shapeFinishedResult,
  storedResult,
  toolErrorResult,
} from './result-shaping.ts';

/**
 * The CallToolResult for a finished operation. A protocol-error outcome throws the
 * JSON-RPC error the state machine chose; an internal-error outcome (our machinery
 * failed) throws -32603 with its message. A result shaped at completion is served as it
 * was stored: `tool` plays no part in it.
 */
export function toCallToolResult(outcome: Outcome, tool: ShapingTool): CallToolResultShape {
  switch (outcome.kind) {
    case 'call-tool-result':
      return outcome.result as CallToolResultShape;
    case 'protocol-error':
      throw new ProtocolError(outcome.code, outcome.message, outcome.data);
    case 'internal-error':
      throw new ProtocolError(JSONRPC.INTERNAL_ERROR, outcome.message);
    case 'tool-error':
      return toolErrorResult(tool.name, outcome.error, outcome.cause);
    case 'result':
      try {
        return successResult(outcome.output, tool);
      } catch (error) {
        if (error instanceof InvalidToolOutput) throw new ProtocolError(JSONRPC.INTERNAL_ERROR, error.message);
        throw error;
      }
    case 'stored-result':
      return storedResult(outcome, tool);
  }
}

/**
 * What a finished record answers: its stored CallToolResult. Only a record written before
 * results were shaped at completion (a raw output) is shaped here, against the tool as it
 * is served now, or, once that tool is gone, with no outputSchema to check.
 */
export function finishedResult(outcome: Outcome, toolName: string, served: ShapingTool | undefined): CallToolResultShape {
  return toCallToolResult(outcome, served ?? { name: toolName });
}
