/**
 * Execution output -> CallToolResult, with no MCP SDK and no zod (DESIGN §3): status sync
 * shapes results at completion, and an EventBridge handler has no use for an MCP server.
 * An object that already has a `content` array is a CallToolResult: any content (text,
 * image, audio, resource, resource_link) with `structuredContent`, `isError` and `_meta`,
 * passed through once it checks out as one. Anything else becomes a text block holding its
 * JSON, plus `structuredContent` when it is an object. With an `outputSchema` the structured
 * result must match it. An output that fails these checks is our failure, not the caller's:
 * `InvalidToolOutput`, which the MCP side answers as -32603 (tool-result.ts).
 */
import type { Outcome } from '../../operations/operation.ts';
import { resultUriFor } from '../../operations/result-store.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { isObject, parseJsonOrText } from '../../shared/json-values.ts';
import { compileSchema, errorsText } from '../../tools/json-schema.ts';

export interface CallToolResultShape {
  content: Array<{ type: 'text'; text: string } | Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What shaping needs of a tool: its name, and its outputSchema as the execution ran it. */
export type ShapingTool = Pick<ToolSpec, 'name' | 'outputSchema'>;

/** A tool's output that breaks its contract (not a CallToolResult, or not its outputSchema). */
export class InvalidToolOutput extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidToolOutput';
  }
}

/**
 * The core's `ResultShaper`: a finished output checked and shaped once, at completion, into
 * the CallToolResult stored on the record; an output that breaks the tool's contract is an
 * internal error, stored as such. Other outcomes are left for the read to word.
 */
export function shapeFinishedResult(outcome: Outcome, tool: ShapingTool): Outcome {
  if (outcome.kind !== 'result' && outcome.kind !== 'stored-result') return outcome;
  try {
    const result = outcome.kind === 'result' ? successResult(outcome.output, tool) : storedResult(outcome, tool);
    return { kind: 'call-tool-result', result };
  } catch (error) {
    if (!(error instanceof InvalidToolOutput)) throw error;
    return { kind: 'internal-error', message: error.message };
  }
}

/** A JSON-RPC error as a finished call answers it, without the SDK's error class. */
export interface AnswerError {
  code: number;
  message: string;
  data?: unknown;
}

// JSON-RPC 2.0's "Internal error", the code a broken output or our own failure is answered with.
const INTERNAL_ERROR = -32603;

/**
 * What a finished operation answers, for readers that carry no MCP SDK (status sync's event
 * appends): its CallToolResult, or the JSON-RPC error the original call would have answered.
 * tool-result.ts's `finishedResult` throws the same error as a ProtocolError.
 */
export function finishedAnswer(outcome: Outcome, tool: ShapingTool): { result: CallToolResultShape } | { error: AnswerError } {
  switch (outcome.kind) {
    case 'call-tool-result':
      return { result: outcome.result as CallToolResultShape };
    case 'protocol-error':
      return { error: { code: outcome.code, message: outcome.message, ...(outcome.data === undefined ? {} : { data: outcome.data }) } };
    case 'internal-error':
      return { error: { code: INTERNAL_ERROR, message: outcome.message } };
    case 'tool-error':
      return { result: toolErrorResult(tool.name, outcome.error, outcome.cause) };
    case 'stored-result':
      return { result: storedResult(outcome, tool) };
    case 'result':
      try {
        return { result: successResult(outcome.output, tool) };
      } catch (error) {
        if (!(error instanceof InvalidToolOutput)) throw error;
        return { error: { code: INTERNAL_ERROR, message: error.message } };
      }
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

/** A finished output as a CallToolResult, or `InvalidToolOutput` when it breaks the tool's contract. */
export function successResult(output: unknown, tool: ShapingTool): CallToolResultShape {
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

function invalidOutput(tool: ShapingTool, problem: string): InvalidToolOutput {
  return new InvalidToolOutput(`Tool ${tool.name} produced output that ${problem}`);
}

// The spec's CallToolResult, as the SDK's schemas check it (unknown keys pass), written out
// so shaping carries no zod. test/unit/call-tool-result-check.test.ts holds the two to agree.

/** A field's problem, `[path, message]`, or undefined when it is fine. */
type Problem = [path: string, message: string] | undefined;
type FieldCheck = (value: unknown) => Problem;

const CONTENT_TYPES = ['text', 'image', 'audio', 'resource', 'resource_link'] as const;

/**
 * What makes `value` not a CallToolResult, in one line (`content[1].data: Invalid Base64
 * string`), or `undefined` when it is one. A content block is checked against the schema
 * of its own `type`, so the message names its problem rather than every union branch.
 */
export function callToolResultProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return `Invalid input: expected object, received ${typeName(value)}`;
  const problem = fieldsProblem(value, {
    _meta: optional(plainObject),
    content: optional(array),
    isError: optional(boolean),
  });
  if (problem) return problemText(problem);
  for (const [index, block] of ((value.content as unknown[] | undefined) ?? []).entries()) {
    const blockProblem = contentBlockProblem(block);
    if (blockProblem) return `content[${index}]${blockProblem}`;
  }
  return undefined;
}

function contentBlockProblem(block: unknown): string | undefined {
  if (!isPlainObject(block)) return ': a content block must be an object';
  const fields = typeof block.type === 'string' ? CONTENT_FIELDS[block.type] : undefined;
  if (!fields) return `.type: ${JSON.stringify(block.type)} is not one of ${CONTENT_TYPES.join(', ')}`;
  const problem = fieldsProblem(block, fields);
  return problem ? `.${problemText(problem)}` : undefined;
}

function problemText([path, message]: [string, string]): string {
  return path ? `${path}: ${message}` : message;
}

function fieldsProblem(value: Record<string, unknown>, fields: Record<string, FieldCheck>): Problem {
  for (const [key, check] of Object.entries(fields)) {
    const problem = check(value[key]);
    if (problem) return [joinPath(key, problem[0]), problem[1]];
  }
  return undefined;
}

function joinPath(key: string | number, rest: string): string {
  const head = typeof key === 'number' ? `[${key}]` : key;
  if (!rest) return head;
  return rest.startsWith('[') ? `${head}${rest}` : `${head}.${rest}`;
}

function expected(kind: string, value: unknown): Problem {
  return ['', `Invalid input: expected ${kind}, received ${typeName(value)}`];
}

const string: FieldCheck = (value) => (typeof value === 'string' ? undefined : expected('string', value));
const number: FieldCheck = (value) => (typeof value === 'number' && Number.isFinite(value) ? undefined : expected('number', value));
const boolean: FieldCheck = (value) => (typeof value === 'boolean' ? undefined : expected('boolean', value));
const array: FieldCheck = (value) => (Array.isArray(value) ? undefined : expected('array', value));
const plainObject: FieldCheck = (value) => (isPlainObject(value) ? undefined : expected('object', value));

function optional(check: FieldCheck): FieldCheck {
  return (value) => (value === undefined ? undefined : check(value));
}

function literal(expectedValue: string): FieldCheck {
  return (value) => (value === expectedValue ? undefined : ['', `Invalid input: expected ${JSON.stringify(expectedValue)}`]);
}

function arrayOf(check: FieldCheck): FieldCheck {
  return (value) => {
    if (!Array.isArray(value)) return expected('array', value);
    for (const [index, item] of value.entries()) {
      const problem = check(item);
      if (problem) return [joinPath(index, problem[0]), problem[1]];
    }
    return undefined;
  };
}

function object(fields: Record<string, FieldCheck>): FieldCheck {
  return (value) => (isPlainObject(value) ? fieldsProblem(value, fields) : expected('object', value));
}

function oneOf(...options: string[]): FieldCheck {
  return (value) =>
    typeof value === 'string' && options.includes(value)
      ? undefined
      : ['', `Invalid option: expected one of ${options.map((o) => JSON.stringify(o)).join('|')}`];
}

/** `atob` decides, as the SDK's Base64 check does (it is lenient about padding and whitespace). */
const base64: FieldCheck = (value) => {
  if (typeof value !== 'string') return expected('string', value);
  try {
    atob(value);
    return undefined;
  } catch {
    return ['', 'Invalid Base64 string'];
  }
};

// RFC 3339 with seconds and a Z or offset, valid calendar dates (zod's iso.datetime({ offset: true })).
const DATE =
  '(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8])))';
const DATETIME = new RegExp(`^${DATE}T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$`);
const datetime: FieldCheck = (value) => {
  if (typeof value !== 'string') return expected('string', value);
  return DATETIME.test(value) ? undefined : ['', 'Invalid ISO datetime'];
};

const priority: FieldCheck = (value) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) return expected('number', value);
  if (value < 0) return ['', 'Too small: expected number to be >=0'];
  return value > 1 ? ['', 'Too big: expected number to be <=1'] : undefined;
};

const annotations = optional(
  object({ audience: optional(arrayOf(oneOf('user', 'assistant'))), priority: optional(priority), lastModified: optional(datetime) }),
);
const meta = optional(plainObject);
const icon = object({ src: string, mimeType: optional(string), sizes: optional(arrayOf(string)), theme: optional(oneOf('light', 'dark')) });

/** Text contents when `text` is there, otherwise blob contents: the union's two branches. */
const resourceContents: FieldCheck = (value) => {
  if (!isPlainObject(value)) return expected('object', value);
  const base = { uri: string, mimeType: optional(string), _meta: meta };
  return fieldsProblem(value, 'text' in value && !('blob' in value) ? { ...base, text: string } : { ...base, blob: base64 });
};

const CONTENT_FIELDS: Record<string, Record<string, FieldCheck>> = {
  text: { type: literal('text'), text: string, annotations, _meta: meta },
  image: { type: literal('image'), data: base64, mimeType: string, annotations, _meta: meta },
  audio: { type: literal('audio'), data: base64, mimeType: string, annotations, _meta: meta },
  resource: { type: literal('resource'), resource: resourceContents, annotations, _meta: meta },
  resource_link: {
    name: string,
    title: optional(string),
    icons: optional(arrayOf(icon)),
    uri: string,
    description: optional(string),
    mimeType: optional(string),
    size: optional(number),
    annotations,
    _meta: meta,
    type: literal('resource_link'),
  },
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}
