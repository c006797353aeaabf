/**
 * Execution output -> CallToolResult (DESIGN §3). An object that already has a
 * `content` array is a CallToolResult: any content (text, image, audio, resource,
 * resource_link) with `structuredContent`, `isError` and `_meta`, passed through once it
 * checks out as one. Anything else becomes a text block holding its JSON, plus
 * `structuredContent` when it is an object. With an `outputSchema` the structured result
 * must match it. An output that fails these checks is our failure, not the caller's.
 */
import { ProtocolError, specTypeSchemas } from '@modelcontextprotocol/server';
import type { Outcome } from '../../operations/operation.ts';
import { resultUriFor } from '../../operations/result-store.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { isObject, parseJsonOrText } from '../../shared/json-values.ts';
import { compileSchema, errorsText } from '../../tools/json-schema.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';

export interface CallToolResultShape {
  content: Array<{ type: 'text'; text: string } | Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What shaping needs of a tool: its name, and its outputSchema as the execution ran it. */
export type ShapingTool = Pick<ToolSpec, 'name' | 'outputSchema'>;

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
      return successResult(outcome.output, tool);
    case 'stored-result':
      return storedResult(outcome, tool);
  }
}

/**
 * An output too large to inline: a `resource_link` the client reads with `resources/read`.
 * It is not checked against the outputSchema here (the server holds only its location);
 * the link says what it is and how large.
 */
export function storedResult(outcome: Extract<Outcome, { kind: 'stored-result' }>, tool: ShapingTool): CallToolResultShape {
  return {
    content: [
      {
        type: 'resource_link',
        uri: resultUriFor(outcome.resultId),
        name: `${tool.name} result`,
        description: `The result of ${tool.name} (${outcome.bytes} bytes), too large to inline: read it with resources/read.`,
        mimeType: outcome.mimeType,
        size: outcome.bytes,
      },
    ],
  };
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

/**
 * The core's `ResultShaper`: a finished output checked and shaped once, at completion, into
 * the CallToolResult stored on the record; an output that breaks the tool's contract is an
 * internal error, stored as such. Other outcomes are left for the read to word.
 */
export function shapeFinishedResult(outcome: Outcome, tool: ShapingTool): Outcome {
  if (outcome.kind !== 'result' && outcome.kind !== 'stored-result') return outcome;
  try {
    return { kind: 'call-tool-result', result: toCallToolResult(outcome, tool) };
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { kind: 'internal-error', message: error.message };
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

function successResult(output: unknown, tool: ShapingTool): CallToolResultShape {
  if (isObject(output) && Array.isArray(output.content)) return passThrough(output, tool);
  const result: CallToolResultShape = { content: [{ type: 'text', text: JSON.stringify(output) }] };
  if (isObject(output)) result.structuredContent = output;
  checkOutputSchema(output, tool);
  return result;
}

/** A CallToolResult the state machine built itself, after the checks a client would make. */
function passThrough(output: Record<string, unknown>, tool: ShapingTool): CallToolResultShape {
  const problem = callToolResultProblem(output);
  if (problem) throw invalidOutput(tool, `is not a valid CallToolResult: ${problem}`);
  // "Servers MUST provide structured results that conform to this schema"; an error result describes no success.
  if (tool.outputSchema && output.isError !== true) {
    if (!isObject(output.structuredContent)) throw invalidOutput(tool, 'has no structuredContent, which its outputSchema requires');
    checkOutputSchema(output.structuredContent, tool);
  }
  return output as CallToolResultShape;
}

function checkOutputSchema(structured: unknown, tool: ShapingTool): void {
  if (!tool.outputSchema) return;
  const validate = compileSchema(tool.outputSchema);
  if (!validate(structured)) throw invalidOutput(tool, `does not match its outputSchema: ${errorsText(validate)}`);
}

function invalidOutput(tool: ShapingTool, problem: string): ProtocolError {
  return new ProtocolError(JSONRPC.INTERNAL_ERROR, `Tool ${tool.name} produced output that ${problem}`);
}

const CONTENT_SCHEMA_BY_TYPE: Record<string, keyof typeof specTypeSchemas> = {
  text: 'TextContent',
  image: 'ImageContent',
  audio: 'AudioContent',
  resource: 'EmbeddedResource',
  resource_link: 'ResourceLink',
};

/**
 * What makes `value` not a CallToolResult, in one line (`content[1].data: Invalid Base64
 * string`), or `undefined` when it is one. A content block is checked against the schema
 * of its own `type`, so the message names its problem rather than every union branch.
 */
export function callToolResultProblem(value: unknown): string | undefined {
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(value);
  if (!('issues' in checked) || !checked.issues) return undefined;
  if (isObject(value) && Array.isArray(value.content)) {
    for (const [index, block] of value.content.entries()) {
      const problem = contentBlockProblem(block);
      if (problem) return `content[${index}]${problem}`;
    }
  }
  const [issue] = checked.issues;
  return issue ? issueText(issue) : 'is not a CallToolResult';
}

function contentBlockProblem(block: unknown): string | undefined {
  if (!isObject(block)) return ': a content block must be an object';
  const name = typeof block.type === 'string' ? CONTENT_SCHEMA_BY_TYPE[block.type] : undefined;
  if (!name) return `.type: ${JSON.stringify(block.type)} is not one of ${Object.keys(CONTENT_SCHEMA_BY_TYPE).join(', ')}`;
  const checked = specTypeSchemas[name]['~standard'].validate(block);
  const issue = 'issues' in checked ? checked.issues?.[0] : undefined;
  return issue ? `.${issueText(issue)}` : undefined;
}

function issueText(issue: { message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }): string {
  const path = (issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment));
  const where = path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
  return where ? `${where}: ${issue.message}` : issue.message;
}
