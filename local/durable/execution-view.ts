/**
 * What the service says of an execution and of itself, apart from the service, so the modules
 * that describe executions (status-change events) need not import it.
 */
import type { ErrorObject } from '@aws/durable-execution-sdk-js';
import type { RunStatus } from './durable-run.ts';

/** Where the service says its resources live. */
export interface DurableServiceSettings {
  region: string;
  accountId: string;
}

/** One execution as GetDurableExecution and ListDurableExecutionsByFunction describe it. */
export interface ExecutionView {
  DurableExecutionArn: string;
  DurableExecutionName: string;
  FunctionArn: string;
  Status: RunStatus;
  StartTimestamp: Date;
  EndTimestamp?: Date;
  InputPayload?: string;
  Result?: string;
  Error?: ErrorObject;
  Version: string;
}
