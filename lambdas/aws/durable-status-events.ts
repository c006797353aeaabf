/**
 * The status-change events Lambda sends for durable executions, as status sync consumes them,
 * and the EventBridge pattern that selects them. The CDK rule and the local durable service use
 * this one definition, so the local stack forwards exactly what the AWS rule forwards.
 *
 * The detail's fields are those of the API's `Execution` type (ARN, name, function ARN, status,
 * start and end), which is all status sync reads: the result and the error come from
 * GetDurableExecution, so a field the service adds or leaves out costs nothing.
 */
import type { PrefixMatcher } from './status-events.ts';

export const DURABLE_STATUS_CHANGE_SOURCE = 'aws.lambda';
export const DURABLE_STATUS_CHANGE_DETAIL_TYPE = 'Durable Execution Status Change';

/** RUNNING as well as the ends, as for state machines: the RUNNING event carries the execution's ARN. */
export const FORWARDED_DURABLE_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'STOPPED'] as const;

export interface DurableStatusChangeEvent {
  version?: string;
  id?: string;
  'detail-type': typeof DURABLE_STATUS_CHANGE_DETAIL_TYPE;
  source: typeof DURABLE_STATUS_CHANGE_SOURCE;
  account?: string;
  /** When EventBridge emitted it (ISO 8601, to the second). */
  time?: string;
  region?: string;
  resources?: string[];
  detail: {
    durableExecutionArn: string;
    durableExecutionName?: string;
    functionArn?: string;
    status: string;
    /** ISO 8601. */
    startTimestamp?: string | null;
    /** ISO 8601; present once the execution has ended. */
    endTimestamp?: string | null;
  };
}

export interface DurableStatusChangePattern {
  source: string[];
  'detail-type': string[];
  detail: { functionArn: Array<string | PrefixMatcher>; status: string[] };
}

/**
 * The pattern for every durable function whose ARN starts with `functionArnPrefix` (the stack
 * names its durable tools `<prefix><tool>`): one pattern however many tools, including those
 * removed since, whose running executions still end.
 */
export function durableStatusChangePattern(functionArnPrefix: string): DurableStatusChangePattern {
  return {
    source: [DURABLE_STATUS_CHANGE_SOURCE],
    'detail-type': [DURABLE_STATUS_CHANGE_DETAIL_TYPE],
    detail: { functionArn: [{ prefix: functionArnPrefix }], status: [...FORWARDED_DURABLE_STATUSES] },
  };
}

/** Whether `event` is a durable execution's status change (status sync takes both kinds). */
export function isDurableStatusChange(event: { source?: string; 'detail-type'?: string }): event is DurableStatusChangeEvent {
  return event.source === DURABLE_STATUS_CHANGE_SOURCE && event['detail-type'] === DURABLE_STATUS_CHANGE_DETAIL_TYPE;
}

/** The execution's name in a durable execution ARN (`…/durable-execution/<name>/<id>`). */
export function durableExecutionNameOf(executionArn: string): string | undefined {
  return /\/durable-execution\/([A-Za-z0-9_-]+)\/[^/]+$/.exec(executionArn)?.[1];
}
