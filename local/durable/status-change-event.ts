/**
 * The EventBridge event Lambda sends when a durable execution starts or ends
 * (`lambdas/aws/durable-status-events.ts`), built from the execution as GetDurableExecution
 * describes it.
 */
import { randomUUID } from 'node:crypto';
import { DURABLE_STATUS_CHANGE_DETAIL_TYPE, DURABLE_STATUS_CHANGE_SOURCE, type DurableStatusChangeEvent } from '../../lambdas/aws/durable-status-events.ts';
import type { DurableServiceSettings, ExecutionView } from './execution-view.ts';

/** The status-change event for `execution` in its current status. */
export function statusChangeEventOf(execution: ExecutionView, settings: DurableServiceSettings): DurableStatusChangeEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': DURABLE_STATUS_CHANGE_DETAIL_TYPE,
    source: DURABLE_STATUS_CHANGE_SOURCE,
    account: settings.accountId,
    // EventBridge's `time` has no fraction of a second.
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: settings.region,
    resources: [execution.DurableExecutionArn],
    detail: {
      durableExecutionArn: execution.DurableExecutionArn,
      durableExecutionName: execution.DurableExecutionName,
      functionArn: execution.FunctionArn,
      status: execution.Status,
      startTimestamp: execution.StartTimestamp.toISOString(),
      ...(execution.EndTimestamp ? { endTimestamp: execution.EndTimestamp.toISOString() } : {}),
    },
  };
}
