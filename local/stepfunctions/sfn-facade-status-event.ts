/**
 * The EventBridge "Step Functions Execution Status Change" event, built from an execution
 * record exactly as the service emits it for STANDARD executions.
 */
import { randomUUID } from 'node:crypto';
import type { ArnScope } from './sfn-facade-arns.ts';
import type { ExecutionRecord } from './sfn-facade-store.ts';

/** EventBridge's "Step Functions Execution Status Change" event. */
export interface ExecutionStatusChangeEvent {
  version: '0';
  id: string;
  'detail-type': 'Step Functions Execution Status Change';
  source: 'aws.states';
  account: string;
  /** ISO 8601 to the second, as EventBridge writes it. */
  time: string;
  region: string;
  resources: [executionArn: string];
  detail: {
    executionArn: string;
    stateMachineArn: string;
    name: string;
    status: ExecutionRecord['status'];
    /** Epoch milliseconds. */
    startDate: number;
    /** Epoch milliseconds; null while RUNNING. */
    stopDate: number | null;
    /** JSON text; null when left out for size. */
    input: string | null;
    inputDetails: { included: boolean };
    output: string | null;
    outputDetails: { included: boolean } | null;
    error: string | null;
    cause: string | null;
  };
}

/** EventBridge's limit on an event, less headroom for the envelope (the service's figure). */
const MAX_DATA_BYTES = 248 * 1024;

export function buildStatusChangeEvent(record: ExecutionRecord, scope: ArnScope, now = Date.now()): ExecutionStatusChangeEvent {
  // Sizes are measured escaped, as the data sits inside the event's JSON.
  const outputBytes = record.output === undefined ? 0 : Buffer.byteLength(JSON.stringify(record.output));
  const outputIncluded = record.output !== undefined && outputBytes <= MAX_DATA_BYTES;
  const inputIncluded = Buffer.byteLength(JSON.stringify(record.input)) + (outputIncluded ? outputBytes : 0) <= MAX_DATA_BYTES;
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    account: scope.accountId,
    time: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: scope.region,
    resources: [record.executionArn],
    detail: {
      executionArn: record.executionArn,
      stateMachineArn: record.stateMachineArn,
      name: record.name,
      status: record.status,
      startDate: record.startDate,
      stopDate: record.stopDate ?? null,
      input: inputIncluded ? record.input : null,
      inputDetails: { included: inputIncluded },
      output: outputIncluded ? (record.output ?? null) : null,
      outputDetails: record.output === undefined ? null : { included: outputIncluded },
      error: record.error ?? null,
      cause: record.cause ?? null,
    },
  };
}
