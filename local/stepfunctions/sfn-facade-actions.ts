/**
 * The Step Functions actions the facade serves: each validates its request body
 * (loosely, so unknown fields pass as they do in AWS), calls the engine and returns
 * the response body in the service's shape, dates as epoch seconds.
 */
import * as z from 'zod';
import { isObject } from '../../lambdas/shared/json-values.ts';
import type { ExecutionEngine, PreparedMachine } from './sfn-facade-engine.ts';
import { SfnApiError } from './sfn-facade-errors.ts';
import type { HistoryEvent } from './sfn-facade-history.ts';
import type { ExecutionRecord } from './sfn-facade-store.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';

export type SfnAction = (body: unknown) => Promise<object>;

/** The service's limit on execution input and task output, bytes of UTF-8. */
const MAX_DATA_BYTES = 262_144;
const arn = z.string().min(1).max(2048);
const taskToken = z.string().min(1).max(2048);
const maxResults = z.number().int().min(0).max(1000).optional();
const nextToken = z.string().min(1).max(3096).optional();
const error = z.string().max(256).optional();
const cause = z.string().max(32_768).optional();
const includedData = z.enum(['ALL_DATA', 'METADATA_ONLY']).optional();
/** Input and output are limited in bytes, not characters, and checked with the other model constraints. */
const data = z.string().refine((text) => Buffer.byteLength(text) <= MAX_DATA_BYTES, {
  message: `Member must have size less than or equal to ${MAX_DATA_BYTES} bytes in UTF-8 encoding`,
});
const startRequest = z.looseObject({ stateMachineArn: arn, name: z.string().min(1).max(80).optional(), input: data.optional() });
/** Fields whose value the service leaves out of a validation message. */
const SENSITIVE = new Set(['input', 'output', 'error', 'cause', 'taskToken']);

const schemas = {
  StartExecution: startRequest,
  StartSyncExecution: startRequest,
  DescribeExecution: z.looseObject({ executionArn: arn, includedData }),
  StopExecution: z.looseObject({ executionArn: arn, error, cause }),
  SendTaskSuccess: z.looseObject({ taskToken, output: data }),
  SendTaskFailure: z.looseObject({ taskToken, error, cause }),
  SendTaskHeartbeat: z.looseObject({ taskToken }),
  GetExecutionHistory: z.looseObject({
    executionArn: arn,
    maxResults,
    nextToken,
    reverseOrder: z.boolean().optional(),
    includeExecutionData: z.boolean().optional(),
  }),
  ListExecutions: z.looseObject({
    stateMachineArn: arn.optional(),
    mapRunArn: arn.optional(),
    statusFilter: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE']).optional(),
    maxResults,
    nextToken,
  }),
  ListStateMachines: z.looseObject({ maxResults, nextToken }),
  DescribeStateMachine: z.looseObject({ stateMachineArn: arn, includedData }),
};

/** The action table, keyed by the name after `AWSStepFunctions.` in `X-Amz-Target`. */
export function createSfnActions(engine: ExecutionEngine, tokens: TaskTokens, roleArn: string): Record<string, SfnAction> {
  const actions: { [K in keyof typeof schemas]: (request: z.infer<(typeof schemas)[K]>) => object | Promise<object> } = {
    async StartExecution({ stateMachineArn, name, input }) {
      const record = await engine.start(stateMachineArn, name, input);
      return { executionArn: record.executionArn, startDate: seconds(record.startDate) };
    },
    async StartSyncExecution({ stateMachineArn, name, input }) {
      const record = await engine.startSync(stateMachineArn, name, input);
      const billed = Math.max(100, Math.ceil(((record.stopDate ?? record.startDate) - record.startDate) / 100) * 100);
      return { ...executionOutput(record, 'ALL_DATA'), billingDetails: { billedMemoryUsedInMB: 64, billedDurationInMilliseconds: billed } };
    },
    DescribeExecution: ({ executionArn, includedData }) => executionOutput(engine.describe(executionArn), includedData ?? 'ALL_DATA'),
    async StopExecution({ executionArn, error, cause }) {
      return { stopDate: seconds(await engine.stop(executionArn, error, cause)) };
    },
    SendTaskSuccess({ taskToken, output }) {
      tokens.succeed(taskToken, output);
      return {};
    },
    SendTaskFailure({ taskToken, error, cause }) {
      tokens.fail(taskToken, error, cause);
      return {};
    },
    SendTaskHeartbeat({ taskToken }) {
      tokens.heartbeat(taskToken);
      return {};
    },
    GetExecutionHistory({ executionArn, maxResults, nextToken, reverseOrder, includeExecutionData }) {
      const events = [...engine.history(executionArn)];
      if (reverseOrder) events.reverse();
      const page = paginate(events, `history:${executionArn}:${reverseOrder === true}`, maxResults, nextToken);
      return { events: page.items.map((event) => historyEventOutput(event, includeExecutionData ?? true)), ...page.next };
    },
    ListExecutions({ stateMachineArn, mapRunArn, statusFilter, maxResults, nextToken }) {
      if (mapRunArn) throw new SfnApiError('ValidationException', 'Map Runs are not supported by the local runtime');
      if (!stateMachineArn) throw new SfnApiError('ValidationException', 'Must provide a StateMachine ARN or MapRun ARN');
      const status = statusFilter === 'PENDING_REDRIVE' ? undefined : statusFilter;
      const records = statusFilter === 'PENDING_REDRIVE' ? [] : engine.list(stateMachineArn, status);
      const page = paginate(records, `executions:${stateMachineArn}:${statusFilter ?? ''}`, maxResults, nextToken);
      return { executions: page.items.map(executionListItem), ...page.next };
    },
    ListStateMachines({ maxResults, nextToken }) {
      const page = paginate(engine.machines(), 'stateMachines', maxResults, nextToken);
      return {
        stateMachines: page.items.map((m) => ({ stateMachineArn: m.arn, name: m.name, type: m.type, creationDate: seconds(m.creationDate) })),
        ...page.next,
      };
    },
    DescribeStateMachine: ({ stateMachineArn, includedData }) => stateMachineOutput(engine.machine(stateMachineArn), roleArn, includedData),
  };

  const table: Record<string, SfnAction> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const action = actions[name as keyof typeof schemas] as (request: unknown) => object | Promise<object>;
    table[name] = async (body) => action(validate(schema, body));
  }
  return table;
}

/**
 * Model constraints come before any other check, and fail as the service words them:
 * `1 validation error detected: Value 'x…' at 'name' failed to satisfy constraint: Member
 * must have length less than or equal to 80` (sensitive values left out).
 */
function validate(schema: z.ZodType, body: unknown): unknown {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const details = issues.map((issue) => {
    const field = issue.path.join('.') || '(body)';
    const value = valueAt(body, issue.path);
    const shown = value === undefined ? 'Value null' : typeof value === 'string' && !SENSITIVE.has(field) ? `Value '${value}'` : 'Value';
    return `${shown} at '${field}' failed to satisfy constraint: ${constraint(issue, value)}`;
  });
  throw new SfnApiError('ValidationException', `${issues.length} validation error${issues.length === 1 ? '' : 's'} detected: ${details.join('; ')}`);
}

function constraint(issue: z.core.$ZodIssue, value: unknown): string {
  if (value === undefined) return 'Member must not be null';
  if (issue.code === 'too_big' && issue.origin === 'string') return `Member must have length less than or equal to ${issue.maximum}`;
  if (issue.code === 'too_small' && issue.origin === 'string') return `Member must have length greater than or equal to ${issue.minimum}`;
  return issue.message;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path) value = isObject(value) ? value[String(key)] : undefined;
  return value;
}

function executionOutput(record: ExecutionRecord, includedData: 'ALL_DATA' | 'METADATA_ONLY'): object {
  const data = includedData === 'ALL_DATA';
  return {
    ...executionListItem(record),
    ...(data ? { input: record.input, inputDetails: { included: true } } : {}),
    ...(data && record.output !== undefined ? { output: record.output, outputDetails: { included: true } } : {}),
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(record.cause === undefined ? {} : { cause: record.cause }),
  };
}

function executionListItem(record: ExecutionRecord): object {
  return {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: seconds(record.startDate),
    ...(record.stopDate === undefined ? {} : { stopDate: seconds(record.stopDate) }),
  };
}

function stateMachineOutput(machine: PreparedMachine, roleArn: string, includedData?: string): object {
  return {
    stateMachineArn: machine.arn,
    name: machine.name,
    status: 'ACTIVE',
    // As written: worker placeholders are bound in-process instead of substituted.
    ...(includedData === 'METADATA_ONLY' ? {} : { definition: machine.definitionText }),
    roleArn,
    type: machine.type,
    creationDate: seconds(machine.creationDate),
    loggingConfiguration: { level: 'OFF', includeExecutionData: false },
    tracingConfiguration: { enabled: false },
  };
}

function historyEventOutput(event: HistoryEvent, includeExecutionData: boolean): object {
  const output: Record<string, unknown> = { ...event, timestamp: seconds(event.timestamp) };
  if (!includeExecutionData) {
    for (const [key, value] of Object.entries(output)) {
      if (!key.endsWith('EventDetails') || typeof value !== 'object' || value === null) continue;
      const { input: _input, output: _output, ...rest } = value as Record<string, unknown>;
      output[key] = rest;
    }
  }
  return output;
}

/** Offset paging with opaque tokens bound to the listing they came from. */
function paginate<T>(items: readonly T[], listing: string, maxResults = 0, token?: string) {
  const limit = maxResults === 0 ? 100 : maxResults;
  let offset = 0;
  if (token !== undefined) {
    try {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { l?: unknown; o?: unknown };
      if (decoded.l !== listing || typeof decoded.o !== 'number' || !Number.isInteger(decoded.o) || decoded.o < 0) throw new Error();
      offset = decoded.o;
    } catch {
      throw new SfnApiError('InvalidToken', 'Invalid Token: the pagination token is not valid for this request');
    }
  }
  const end = offset + limit;
  const next = end < items.length ? { nextToken: Buffer.from(JSON.stringify({ l: listing, o: end })).toString('base64url') } : {};
  return { items: items.slice(offset, end), next };
}

/** The service sends timestamps as epoch seconds with a fraction. */
function seconds(epochMs: number): number {
  return epochMs / 1000;
}
