/**
 * The durable-execution half of the Lambda API over registered handlers: start (Invoke with a
 * `DurableExecutionName`, idempotent on the same payload), read, list, stop, and the callback
 * and checkpoint calls, each answering with the error Lambda answers with; each execution's
 * status changes go out as EventBridge events, and with a store its record is saved on every
 * change and taken up again after a restart. The HTTP wire is in `lambda-durable-routes.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { DurableExecutionApiClient, DurableLambdaHandler, ErrorObject, OperationUpdate } from '@aws/durable-execution-sdk-js';
import type { DurableStatusChangeEvent } from '../../lambdas/aws/durable-status-events.ts';
import { callbackIdParts } from './checkpoint-journal.ts';
import type { CheckpointWorkerClient } from './checkpoint-worker-client.ts';
import { DurableRun } from './durable-run.ts';
import type { ExecutionStore, StoredExecution } from './execution-store.ts';
import { LambdaApiError } from './lambda-api-error.ts';
import { statusChangeEventOf } from './status-change-event.ts';
import type { DurableServiceSettings, ExecutionView } from './execution-view.ts';

export type { DurableServiceSettings, ExecutionView } from './execution-view.ts';

/** The filters of ListDurableExecutionsByFunction. */
export interface ListFilter {
  statuses?: string[];
  name?: string;
  startedAfter?: Date;
  startedBefore?: Date;
  reverseOrder?: boolean;
}

interface Execution {
  run: DurableRun;
  name: string;
  functionName: string;
  payload: string | undefined;
  started: Date;
}

/** What the service does besides answering the API. */
export interface DurableServiceHooks {
  /** Where executions are saved; none keeps them in memory only. */
  store?: ExecutionStore;
  /** Gets each execution's start (RUNNING) and end, once the API answers that status. */
  onStatusChange?: (event: DurableStatusChangeEvent) => void;
}

// Lambda's pattern for execution names (1 to 64 characters).
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The executions of every registered durable function. */
export class DurableExecutionService {
  private readonly handlers = new Map<string, DurableLambdaHandler>();
  private readonly byArn = new Map<string, Execution>();
  private readonly byName = new Map<string, Execution>();
  private readonly byWorkerId = new Map<string, Execution>();
  /** Callbacks answered through this service (`<worker execution id>/<operation id>`): closed, whatever the worker records later. */
  private readonly closedCallbacks = new Set<string>();

  constructor(
    private readonly worker: CheckpointWorkerClient,
    private readonly transport: () => DurableExecutionApiClient,
    private readonly settings: DurableServiceSettings,
    private readonly hooks: DurableServiceHooks = {},
  ) {}

  /** Serves `handler` (built with `withDurableExecution`) as the function `functionName`. */
  register(functionName: string, handler: DurableLambdaHandler): void {
    this.handlers.set(functionName, handler);
  }

  functionArn(functionName: string): string {
    return `arn:aws:lambda:${this.settings.region}:${this.settings.accountId}:function:${functionName}`;
  }

  /** Invoke on a durable function: a new execution, or the same one for the same name and payload. */
  async start(functionRef: string, name: string | undefined, payload: string | undefined): Promise<DurableRun> {
    const functionName = this.functionNameOf(functionRef);
    const handler = this.handlers.get(functionName);
    if (!handler) throw new LambdaApiError('ResourceNotFoundException', `Function not found: ${this.functionArn(functionName)}`);
    if (name !== undefined && !EXECUTION_NAME.test(name)) {
      throw new LambdaApiError('InvalidParameterValueException', 'DurableExecutionName must match [a-zA-Z0-9-_]{1,64}');
    }
    const executionName = name ?? randomUUID();
    const key = `${functionName}/${executionName}`;
    const existing = this.byName.get(key);
    if (existing) {
      if (existing.payload === payload) return existing.run;
      throw new LambdaApiError(
        'DurableExecutionAlreadyStartedException',
        `Durable execution with name ${executionName} already exists with a different payload`,
      );
    }
    const arn = `${this.functionArn(functionName)}:$LATEST/durable-execution/${executionName}/${randomUUID()}`;
    const execution = this.track(arn, executionName, functionName, payload, new Date(), handler, randomUUID());
    try {
      await execution.run.start(payload);
    } catch (error) {
      // Never started: the name stays free for a retry.
      this.byName.delete(key);
      this.byArn.delete(arn);
      this.byWorkerId.delete(execution.run.workerExecutionId);
      throw new LambdaApiError('ServiceException', 'The durable execution could not be started', { cause: error });
    }
    return execution.run;
  }

  /**
   * Takes up executions saved before a restart: ended ones as they ended, running ones
   * resumed. Call it once the handlers are registered and the endpoint they checkpoint to
   * listens; the resumed handlers are invoked after it returns.
   */
  async restore(saved: StoredExecution[]): Promise<void> {
    const resumed: DurableRun[] = [];
    for (const record of saved) {
      const handler = this.handlers.get(record.functionName);
      const execution = this.track(record.arn, record.name, record.functionName, record.payload, record.started, handler, record.workerExecutionId, record);
      if (record.status !== 'RUNNING') continue;
      if (!handler) {
        console.error(JSON.stringify({ level: 'warn', message: 'durable execution not resumed: its function is not registered', arn: record.arn }));
        continue;
      }
      await execution.run.rebuild(record.payload);
      resumed.push(execution.run);
    }
    // Every execution rebuilt before any handler runs: none begins before this call returns.
    for (const run of resumed) run.proceed();
  }

  describe(arn: string, includeData = true): ExecutionView {
    return this.viewOf(this.execution(arn), includeData);
  }

  list(functionRef: string, filter: ListFilter): ExecutionView[] {
    const functionName = this.functionNameOf(functionRef);
    if (!this.handlers.has(functionName)) {
      throw new LambdaApiError('ResourceNotFoundException', `Function not found: ${this.functionArn(functionName)}`);
    }
    const matching = [...this.byArn.values()].filter(
      (execution) =>
        execution.functionName === functionName &&
        (!filter.statuses?.length || filter.statuses.includes(execution.run.status)) &&
        (filter.name === undefined || execution.name === filter.name) &&
        (!filter.startedAfter || execution.started >= filter.startedAfter) &&
        (!filter.startedBefore || execution.started <= filter.startedBefore),
    );
    const views = matching.map((execution) => this.viewOf(execution, false));
    return filter.reverseOrder ? views.reverse() : views;
  }

  /**
   * StopDurableExecution. Lambda's model lists no conflict for an execution that has ended:
   * stopping one changes nothing and answers when it ended, as AWS's own durable execution
   * testing service does.
   */
  stop(arn: string, error: ErrorObject | undefined): Date {
    const execution = this.execution(arn);
    if (execution.run.status !== 'RUNNING') return execution.run.endTimestamp ?? execution.started;
    return execution.run.stop(error);
  }

  /** CheckpointDurableExecution, as the SDK calls it from inside an invocation. */
  checkpoint(arn: string, input: { CheckpointToken?: string; Updates?: OperationUpdate[]; ClientToken?: string }) {
    const execution = this.running(arn);
    return backend(() => execution.run.checkpoint(input));
  }

  /** GetDurableExecutionState: the operations, in one page. */
  state(arn: string) {
    const execution = this.execution(arn);
    return backend(() => execution.run.state());
  }

  /**
   * SendDurableExecutionCallbackSuccess, Failure and Heartbeat. A callback that no longer waits
   * (answered, timed out, its execution ended) is CallbackTimeoutException, as Lambda's model
   * says: "The callback ID token has either expired or the callback associated with the token
   * has already been closed."
   */
  async callback(callbackId: string, outcome: { succeed: Uint8Array } | { fail: ErrorObject } | 'heartbeat'): Promise<void> {
    const parts = callbackIdParts(callbackId);
    const execution = this.byWorkerId.get(parts?.executionId ?? '');
    if (!parts || !execution) throw new LambdaApiError('ResourceNotFoundException', 'Callback not found');
    const closed = `${parts.executionId}/${parts.operationId}`;
    if (execution.run.status !== 'RUNNING' || this.closedCallbacks.has(closed) || !(await this.callbackWaits(execution, parts.operationId))) {
      throw new LambdaApiError('CallbackTimeoutException', CALLBACK_CLOSED);
    }
    // Closed before the worker is called, so a second answer racing this one is refused too.
    if (outcome !== 'heartbeat') this.closedCallbacks.add(closed);
    try {
      await backend(() => execution.run.answerCallback(callbackId, outcome));
    } catch (error) {
      this.closedCallbacks.delete(closed);
      throw error;
    }
  }

  /** Whether the worker still has the callback open; one it does not know is its to refuse. */
  private async callbackWaits(execution: Execution, operationId: string): Promise<boolean> {
    const { Operations } = await backend(() => execution.run.state());
    const operation = Operations.find((candidate) => candidate.Id === operationId);
    return operation === undefined || operation.Status === 'STARTED';
  }

  /** Cancels every execution's timers, so a closed service keeps nothing pending; settles once no handler invocation is under way. */
  async halt(): Promise<void> {
    await Promise.all([...this.byArn.values()].map((execution) => execution.run.halt()));
  }

  /** An execution the service answers for, new or saved; without a handler it cannot run. */
  private track(
    arn: string,
    name: string,
    functionName: string,
    payload: string | undefined,
    started: Date,
    handler: DurableLambdaHandler | undefined,
    workerExecutionId: string,
    saved?: StoredExecution,
  ): Execution {
    const parts = {
      worker: this.worker,
      handler: handler ?? (() => Promise.reject(new Error(`Function not registered: ${functionName}`))),
      transport: this.transport,
      functionName,
      functionArn: this.functionArn(functionName),
      changed: () => this.save(execution),
      statusChanged: () => this.announce(execution),
    };
    const execution: Execution = { run: new DurableRun(parts, arn, workerExecutionId, saved), name, functionName, payload, started };
    this.byName.set(`${functionName}/${name}`, execution);
    this.byArn.set(arn, execution);
    this.byWorkerId.set(workerExecutionId, execution);
    return execution;
  }

  private save(execution: Execution): void {
    const { run } = execution;
    this.hooks.store?.save({
      arn: run.arn,
      name: execution.name,
      functionName: execution.functionName,
      payload: execution.payload,
      started: execution.started,
      workerExecutionId: run.workerExecutionId,
      status: run.status,
      result: run.result,
      error: run.error,
      endTimestamp: run.endTimestamp,
      journal: run.journal,
      operations: Object.fromEntries(run.operations),
    });
  }

  /** The status-change event; a listener's failure is logged, and changes nothing for the run. */
  private announce(execution: Execution): void {
    if (!this.hooks.onStatusChange) return;
    try {
      this.hooks.onStatusChange(statusChangeEventOf(this.viewOf(execution, false), this.settings));
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', message: 'durable status change listener failed', arn: execution.run.arn, error: String(error) }));
    }
  }

  private viewOf(execution: Execution, includeData: boolean): ExecutionView {
    const { run } = execution;
    return {
      DurableExecutionArn: run.arn,
      DurableExecutionName: execution.name,
      FunctionArn: this.functionArn(execution.functionName),
      Status: run.status,
      StartTimestamp: execution.started,
      EndTimestamp: run.endTimestamp,
      Version: '$LATEST',
      ...(includeData ? { InputPayload: execution.payload, Result: run.result, Error: run.error } : {}),
    };
  }

  private execution(arn: string): Execution {
    const execution = this.byArn.get(arn);
    if (!execution) throw new LambdaApiError('ResourceNotFoundException', `Durable execution not found: ${arn}`);
    return execution;
  }

  private running(arn: string): Execution {
    const execution = this.execution(arn);
    if (execution.run.status !== 'RUNNING') {
      throw new LambdaApiError('InvalidParameterValueException', `Durable execution is not running: ${execution.run.status}`);
    }
    return execution;
  }

  /** A function name, partial ARN or ARN, without its qualifier. */
  private functionNameOf(functionRef: string): string {
    const afterFunction = functionRef.includes('function:') ? (functionRef.split('function:')[1] ?? '') : functionRef;
    return afterFunction.split(':')[0] ?? '';
  }
}

/** Lambda's words for a callback that no longer waits (the model's CallbackTimeoutException). */
const CALLBACK_CLOSED = 'The callback ID token has either expired or the callback associated with the token has already been closed';

/** A call to the worker whose refusals (validation, unknown ids) are the caller's errors. */
async function backend<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const message = error instanceof Error || (error && typeof error === 'object' && 'message' in error) ? String((error as Error).message) : String(error);
    if (/not found/i.test(message)) throw new LambdaApiError('ResourceNotFoundException', message, { cause: error });
    throw new LambdaApiError('InvalidParameterValueException', message, { cause: error });
  }
}
