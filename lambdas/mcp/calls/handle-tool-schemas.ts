/**
 * What a client without async support sees when handle tools are on: the four built-in
 * tools, and long-running tools whose descriptions and output schemas say that a call
 * may answer with an operation id instead of the result. Descriptions are written for
 * the model that reads them.
 */
import type { ToolSpec } from '../../operations/tool-spec.ts';
import type { ToolListing } from '../dialects/dialect.ts';

export const OPERATION_STATUS = 'operation_status';
export const OPERATION_RESULT = 'operation_result';
export const OPERATION_CANCEL = 'operation_cancel';
export const OPERATION_LIST = 'operation_list';
export const BUILT_IN_TOOL_NAMES: readonly string[] = [OPERATION_STATUS, OPERATION_RESULT, OPERATION_CANCEL, OPERATION_LIST];

/** The longest `operation_result` wait a caller may ask for, seconds: under the ~60 s at which clients give up. */
export const MAX_WAIT_SECONDS = 50;

/** The statuses a handle reports, in the words a model reads. */
export const HANDLE_STATUSES = ['working', 'input_required', 'completed', 'failed', 'canceled'] as const;
export type HandleStatus = (typeof HANDLE_STATUSES)[number];

const operationId = {
  type: 'string',
  minLength: 1,
  description: 'The operationId a long-running tool call returned (or operation_list shows).',
};
const status = {
  type: 'string',
  enum: [...HANDLE_STATUSES],
  description: 'working or input_required while it runs; completed, failed or canceled once it has ended.',
};
const pollAfterSeconds = { type: 'integer', minimum: 0, description: 'Seconds to wait before checking on the operation again.' };
const statusMessage = { type: 'string', description: 'What the operation is doing, in words.' };

/** `structuredContent` of a call that answered with a handle. */
export const HANDLE_OUTPUT_SCHEMA = {
  type: 'object',
  properties: { operationId, status, pollAfterSeconds },
  required: ['operationId', 'status', 'pollAfterSeconds'],
};

const STATUS_OUTPUT_SCHEMA = {
  type: 'object',
  properties: { operationId, status, statusMessage, pollAfterSeconds },
  required: ['operationId', 'status', 'pollAfterSeconds'],
};

const LIST_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    operations: {
      type: 'array',
      description: 'Your operations, newest first.',
      items: {
        type: 'object',
        properties: {
          operationId,
          tool: { type: 'string', description: 'The tool that was called.' },
          status,
          statusMessage,
          createdAt: { type: 'string', format: 'date-time', description: 'When the call was made.' },
          pollAfterSeconds,
        },
        required: ['operationId', 'tool', 'status', 'createdAt', 'pollAfterSeconds'],
      },
    },
    nextCursor: { type: 'string', description: 'Present when there are more: pass it as cursor to operation_list.' },
  },
  required: ['operations'],
};

const ID_INPUT_SCHEMA = {
  type: 'object',
  properties: { operationId },
  required: ['operationId'],
  additionalProperties: false,
};

/** The four built-in tools as `tools/list` shows them. */
export const BUILT_IN_LISTINGS: readonly ToolListing[] = [
  {
    name: OPERATION_STATUS,
    title: 'Check a long-running operation',
    description:
      'Checks on a long-running tool call without waiting: returns its status (working, input_required, completed, failed or canceled) ' +
      'and how many seconds to wait before checking again. Once it is completed or failed, call operation_result to read the result.',
    inputSchema: ID_INPUT_SCHEMA,
    outputSchema: STATUS_OUTPUT_SCHEMA,
  },
  {
    // No outputSchema: the answer is the called tool's own result, shaped by that tool's schema,
    // or the status while it still runs; clients check structuredContent against a declared schema.
    name: OPERATION_RESULT,
    title: 'Get the result of a long-running operation',
    description:
      'Returns the result of a long-running tool call, exactly as the tool itself would have returned it. ' +
      `Waits up to waitSeconds (at most ${MAX_WAIT_SECONDS}) for the operation to finish; if it is still running then, ` +
      'returns its status instead, and you call operation_result again. A failed tool returns its error result.',
    inputSchema: {
      type: 'object',
      properties: {
        operationId,
        waitSeconds: {
          type: 'number',
          minimum: 0,
          maximum: MAX_WAIT_SECONDS,
          default: 0,
          description: `How long to wait for the operation to finish, in seconds (0 to ${MAX_WAIT_SECONDS}). 0 answers at once.`,
        },
      },
      required: ['operationId'],
      additionalProperties: false,
    },
  },
  {
    name: OPERATION_CANCEL,
    title: 'Cancel a long-running operation',
    description:
      'Stops a long-running tool call and returns its status. An operation that already finished keeps its result: ' +
      'the status then says completed or failed, and operation_result still returns it.',
    inputSchema: ID_INPUT_SCHEMA,
    outputSchema: STATUS_OUTPUT_SCHEMA,
  },
  {
    name: OPERATION_LIST,
    title: 'List long-running operations',
    description:
      'Lists the long-running tool calls you started that the server still keeps, newest first, with their status. ' +
      'Use it to find an operationId you lost. When nextCursor is returned, call again with it for more.',
    inputSchema: {
      type: 'object',
      properties: { cursor: { type: 'string', description: 'The nextCursor of the previous page; leave out for the first page.' } },
      additionalProperties: false,
    },
    outputSchema: LIST_OUTPUT_SCHEMA,
  },
];

/**
 * A catalog tool as a client without async support sees it when handle tools are on:
 * every tool, with the long-running ones (async and hybrid alike run up to their sync
 * bound, then hand off) saying how their answer comes back.
 */
export function handleListing(tool: ToolSpec, base: ToolListing, maxBlockingSeconds: number): ToolListing {
  if (tool.invocation === 'sync') return base;
  const { outputSchema: own, ...rest } = base;
  const boundSeconds = Math.min(tool.timing.syncTimeoutSeconds, maxBlockingSeconds);
  return {
    ...rest,
    description:
      `${base.description}\n\nIf this tool takes longer than ${boundSeconds} seconds, the call returns an operationId instead of the result and the tool keeps running: ` +
      `then call operation_result with that operationId (waitSeconds up to ${MAX_WAIT_SECONDS}) to get the result.`,
    ...(own === undefined ? {} : { outputSchema: resultOrHandle(own) }),
  };
}

/**
 * A long-running tool answers with its own result or with a handle. Keywords that must stay at
 * the schema's root (its dialect, base URI and definitions, which `$ref`s resolve against)
 * are kept there; the rest becomes the first alternative.
 */
function resultOrHandle(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema, $id, $defs, definitions, ...own } = schema;
  const root = Object.fromEntries(Object.entries({ $schema, $id, $defs, definitions }).filter(([, value]) => value !== undefined));
  return { ...root, type: 'object', anyOf: [own, HANDLE_OUTPUT_SCHEMA] };
}
