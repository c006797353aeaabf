/**
 * The Step Functions status-change events status sync consumes, and the EventBridge
 * pattern that selects them. The CDK rule and the local event bus use this one
 * definition, so the local stack forwards exactly what AWS forwards.
 */

export const STATUS_CHANGE_SOURCE = 'aws.states';
export const STATUS_CHANGE_DETAIL_TYPE = 'Step Functions Execution Status Change';

/**
 * RUNNING as well as the terminal statuses: a record learns its execution ARN from the
 * RUNNING event instead of a DescribeExecution (15/s per account) on a later poll.
 * PENDING_REDRIVE is left out: a redriven execution reports RUNNING again.
 */
export const FORWARDED_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/** An EventBridge `prefix` content filter. */
export interface PrefixMatcher {
  prefix: string;
}

export interface StatusChangePattern {
  source: string[];
  'detail-type': string[];
  detail: { stateMachineArn: Array<string | PrefixMatcher>; status: string[] };
}

/** The event pattern of the rule for these state machines (EventBridge JSON shape). */
export function statusChangePattern(stateMachineArns: readonly string[]): StatusChangePattern {
  return {
    source: [STATUS_CHANGE_SOURCE],
    'detail-type': [STATUS_CHANGE_DETAIL_TYPE],
    detail: { stateMachineArn: [...stateMachineArns], status: [...FORWARDED_STATUSES] },
  };
}

/**
 * The pattern for every state machine whose ARN starts with `arnPrefix` (the stack names its
 * machines `<prefix><tool>`), plus `stateMachineArns` matched exactly. One pattern covers any
 * number of tools, and the names of tools removed since, whose running executions still end.
 */
export function statusChangePrefixPattern(arnPrefix: string, stateMachineArns: readonly string[] = []): StatusChangePattern {
  return {
    source: [STATUS_CHANGE_SOURCE],
    'detail-type': [STATUS_CHANGE_DETAIL_TYPE],
    detail: { stateMachineArn: [{ prefix: arnPrefix }, ...stateMachineArns], status: [...FORWARDED_STATUSES] },
  };
}
