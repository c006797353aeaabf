/**
 * The event types this server offers (`events/list`), all about the caller's own operations,
 * in every dialect: the ids are the ones the caller holds (a taskId, a SEP-1391 token, a
 * handle tool's operationId). Schemas evolve additively only ("New optional fields MAY be
 * added. Existing fields SHOULD NOT be removed, renamed or retyped").
 */
import * as z from 'zod';
import type { EventFilter } from '../../events/event-filter.ts';
import { OPERATION_FINISHED, OPERATION_INPUT_REQUIRED, OPERATION_PROGRESS } from '../../events/event-names.ts';
import { EventsError } from '../../events/events-error.ts';

export type DeliveryMode = 'poll' | 'push' | 'webhook';

export interface EventType {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly payloadSchema: Record<string, unknown>;
  /** Validates subscription arguments; the failure names the field. */
  parse(args: unknown): EventFilter;
}

export { OPERATION_FINISHED, OPERATION_INPUT_REQUIRED, OPERATION_PROGRESS };

const OPERATION_ID = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  description: "The id a long tool call gave you: a taskId, a SEP-1391 token, or a handle tool's operationId.",
};
const TOOL = { type: 'string', minLength: 1, maxLength: 128, description: 'Only operations of this tool.' };
const COMMON_PAYLOAD = {
  operationId: { type: 'string' },
  tool: { type: 'string' },
  dialect: { type: 'string', description: 'The protocol the operation was started in (tasks-2026-07-28, tasks-2025-11-25, sep-1391, handle, sync).' },
};
/** Where to read or answer an operation: a method with its params, or a tool with its arguments. */
const CALL_HINT = {
  type: 'object',
  properties: { method: { type: 'string' }, params: { type: 'object' }, tool: { type: 'string' }, arguments: { type: 'object' } },
};

const OperationId = z.string({ message: 'must be a string' }).min(1, 'must not be empty').max(256, 'must be at most 256 characters');
const Tool = z.string({ message: 'must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters');
const OptionalFilter = z.strictObject({ operationId: OperationId.optional(), tool: Tool.optional() });
const PerOperationFilter = z.strictObject({ operationId: OperationId });

function parser(schema: z.ZodType<EventFilter>) {
  return (args: unknown): EventFilter => {
    const parsed = schema.safeParse(args ?? {});
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const path = issue?.code === 'unrecognized_keys' ? [issue.keys[0] ?? ''] : (issue?.path ?? []);
    const field = ['arguments', ...path.map(String)].join('.');
    const problem = issue?.code === 'unrecognized_keys' ? 'is not an argument of this event type' : (issue?.message ?? 'is invalid');
    throw new EventsError('INVALID_PARAMS', `Invalid ${field}: ${problem}`, { field });
  };
}

const EVENT_TYPES: readonly EventType[] = [
  {
    name: OPERATION_FINISHED,
    description:
      'Fires when one of your operations ends: completed (the result inline when it fits, isError or not), failed, or cancelled. ' +
      'Subscribe with the operationId a long tool call gave you, to be told when it finishes.',
    inputSchema: { type: 'object', properties: { operationId: OPERATION_ID, tool: TOOL }, additionalProperties: false },
    payloadSchema: {
      type: 'object',
      properties: {
        ...COMMON_PAYLOAD,
        status: { type: 'string', enum: ['completed', 'failed', 'cancelled'] },
        isError: { type: 'boolean' },
        statusMessage: { type: 'string' },
        finishedAt: { type: 'string', format: 'date-time' },
        result: { type: 'object', description: 'The CallToolResult, when the delivery stays under 256 KiB with it.' },
        resultTooLarge: { type: 'boolean', description: 'True when the result is left out; fetch it as `fetch` says.' },
        error: { type: 'object', description: 'The JSON-RPC error of a failed operation.' },
        fetch: { ...CALL_HINT, description: "How to read the result in the operation's own protocol." },
      },
      required: ['operationId', 'tool', 'dialect', 'status', 'isError', 'finishedAt'],
    },
    parse: parser(OptionalFilter),
  },
  {
    name: OPERATION_INPUT_REQUIRED,
    description: 'Fires when one of your operations waits for an answer: the questions it asks, and how to answer them in its protocol.',
    inputSchema: { type: 'object', properties: { operationId: OPERATION_ID, tool: TOOL }, additionalProperties: false },
    payloadSchema: {
      type: 'object',
      properties: {
        ...COMMON_PAYLOAD,
        inputRequests: { type: 'object', description: 'The open questions by key, as tasks/get shows them: { method, params }.' },
        answer: { ...CALL_HINT, description: "How to answer, in the operation's own protocol." },
      },
      required: ['operationId', 'tool', 'dialect', 'inputRequests'],
    },
    parse: parser(OptionalFilter),
  },
  {
    name: OPERATION_PROGRESS,
    description: 'The progress and log lines one running operation reports. The operationId argument is required.',
    inputSchema: { type: 'object', properties: { operationId: OPERATION_ID }, required: ['operationId'], additionalProperties: false },
    payloadSchema: {
      type: 'object',
      properties: {
        ...COMMON_PAYLOAD,
        seq: { type: 'integer', description: "The report's number over the operation's life, from 1." },
        kind: { type: 'string', enum: ['progress', 'log'] },
        progress: { type: 'number' },
        total: { type: 'number' },
        message: { type: 'string' },
        level: { type: 'string' },
        logger: { type: 'string' },
        data: { description: "A log line's data." },
      },
      required: ['operationId', 'tool', 'dialect', 'seq', 'kind'],
    },
    parse: parser(PerOperationFilter),
  },
];

/** The `events/list` descriptors, with the delivery modes this deployment offers. */
export function listEventTypes(modes: readonly DeliveryMode[]): Array<Record<string, unknown>> {
  return EVENT_TYPES.map(({ name, description, inputSchema, payloadSchema }) => ({ name, description, delivery: [...modes], inputSchema, payloadSchema }));
}

/** The event type `name` names; an unknown name is NotFound, `data.kind: "event"`. */
export function eventTypeNamed(name: string): EventType {
  const type = EVENT_TYPES.find((candidate) => candidate.name === name);
  if (!type) throw new EventsError('NOT_FOUND', `Unknown event: ${name.slice(0, 200)}`, { kind: 'event' });
  return type;
}
