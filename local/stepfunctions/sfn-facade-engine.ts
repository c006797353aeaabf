/**
 * The facade's execution lifecycle, independent of the wire: starts runs on the local
 * interpreter, keeps each STANDARD execution's record and history, stops runs, persists
 * records and emits status-change events. Rules follow the service: StartExecution is
 * idempotent only while the same-named execution runs with the same input; EXPRESS
 * executions are neither idempotent, nor describable, nor announced on EventBridge.
 */
import { randomUUID } from 'node:crypto';
import {
  checkExecutionName,
  executionArn,
  expressExecutionArn,
  expressNotSupported,
  parseExecutionArn,
  parseStateMachineArn,
  type ArnScope,
} from './sfn-facade-arns.ts';
import { SfnApiError } from './sfn-facade-errors.ts';
import { ExecutionHistory, type HistoryEvent } from './sfn-facade-history.ts';
import type { InterpreterRun, LocalInterpreter, RunOutcome } from './local-interpreter.ts';
import { operationToolOf, withExecutionSpan } from '../../lambdas/observability/traced-invocation.ts';
import { buildStatusChangeEvent, type ExecutionStatusChangeEvent } from './sfn-facade-status-event.ts';
import type { ExecutionFile, ExecutionRecord, ExecutionStatus } from './sfn-facade-store.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';

export interface PreparedMachine {
  name: string;
  arn: string;
  type: 'STANDARD' | 'EXPRESS';
  definitionText: string;
  /** Epoch milliseconds. */
  creationDate: number;
  interpreter: LocalInterpreter;
}

export interface ExecutionEngineOptions {
  scope: ArnScope;
  machines: PreparedMachine[];
  tokens: TaskTokens;
  roleArn: string;
  store?: ExecutionFile;
  onStatusChange?: (event: ExecutionStatusChangeEvent) => void;
  logger: Pick<Console, 'warn' | 'error'>;
}

interface Execution {
  record: ExecutionRecord;
  history?: ExecutionHistory;
  run?: InterpreterRun;
  done?: Promise<void>;
  timedOut?: boolean;
}

const MAX_DATA_BYTES = 262_144;
/** Express workflows run for at most five minutes. */
const EXPRESS_MAX_MS = 5 * 60_000;
/** How long a finished run may take to flush its last log events into the history. */
const HISTORY_GRACE_MS = 1000;
const RESTARTED_CAUSE = 'The local Step Functions runtime stopped while this execution was running.';

export class ExecutionEngine {
  private readonly machinesByArn: Map<string, PreparedMachine>;
  private readonly executions = new Map<string, Execution>();
  private readonly expressRuns = new Set<Execution>();
  private readonly restarted: ExecutionRecord[] = [];
  private saving: Promise<void> = Promise.resolve();
  private closing = false;

  private constructor(private readonly options: ExecutionEngineOptions) {
    this.machinesByArn = new Map(options.machines.map((machine) => [machine.arn, machine]));
  }

  /** Loads persisted records; executions that were running when the last process stopped become FAILED. */
  static async create(options: ExecutionEngineOptions): Promise<ExecutionEngine> {
    const engine = new ExecutionEngine(options);
    const now = Date.now();
    for (const record of (await options.store?.load()) ?? []) {
      if (record.status === 'RUNNING') {
        Object.assign(record, { status: 'FAILED', stopDate: now, error: 'Local.RuntimeRestarted', cause: RESTARTED_CAUSE });
        engine.restarted.push(record);
      }
      const history = new ExecutionHistory(record, options.roleArn);
      history.close(record);
      engine.executions.set(record.executionArn, { record, history });
    }
    if (engine.restarted.length > 0) await engine.persist();
    return engine;
  }

  /** Emits the status change of executions failed by `create`; call once the listener can act on it. */
  announceRestarted(): void {
    for (const record of this.restarted.splice(0)) this.emit(record);
  }

  machines(): PreparedMachine[] {
    return [...this.machinesByArn.values()];
  }

  /**
   * Serves `machine` from now on, in place of a machine of the same ARN. As across a deploy,
   * running executions keep the machine (definition and workers) they started with.
   */
  setMachine(machine: PreparedMachine): void {
    this.machinesByArn.set(machine.arn, machine);
  }

  /** Stops serving a machine; its running executions run to their end, and its ended ones stay describable. */
  removeMachine(arn: string): void {
    this.machinesByArn.delete(arn);
  }

  machine(arn: string): PreparedMachine {
    parseStateMachineArn(arn);
    const machine = this.machinesByArn.get(arn);
    if (!machine) throw new SfnApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  }

  async start(machineArn: string, name: string | undefined, inputText: string | undefined): Promise<ExecutionRecord> {
    const { machine, execution, input } = this.prepare(machineArn, name, inputText);
    if (machine.type === 'EXPRESS') {
      this.launch(machine, execution, input);
      return execution.record;
    }
    const existing = this.executions.get(execution.record.executionArn);
    if (existing) {
      if (existing.record.status === 'RUNNING' && existing.record.input === execution.record.input) return existing.record;
      throw new SfnApiError('ExecutionAlreadyExists', `Execution Already Exists: '${execution.record.executionArn}'`);
    }
    execution.history = new ExecutionHistory(execution.record, this.options.roleArn);
    this.executions.set(execution.record.executionArn, execution);
    try {
      await this.persist();
    } catch (error) {
      this.executions.delete(execution.record.executionArn);
      throw error;
    }
    // A StopExecution may have landed while the record was being written.
    if (execution.record.status !== 'RUNNING') return execution.record;
    this.emit(execution.record);
    this.launch(machine, execution, input);
    return execution.record;
  }

  /** Runs an EXPRESS execution to its end and returns its final record. */
  async startSync(machineArn: string, name: string | undefined, inputText: string | undefined): Promise<ExecutionRecord> {
    const { machine, execution, input } = this.prepare(machineArn, name, inputText);
    if (machine.type !== 'EXPRESS') {
      throw new SfnApiError('StateMachineTypeNotSupported', 'This operation is not supported by STANDARD state machines');
    }
    this.launch(machine, execution, input);
    await execution.done;
    if (execution.record.status === 'RUNNING') throw new Error('the local Step Functions runtime is shutting down');
    return execution.record;
  }

  describe(arn: string): ExecutionRecord {
    return this.find(arn).record;
  }

  history(arn: string): readonly HistoryEvent[] {
    return this.find(arn).history?.list() ?? [];
  }

  /** Executions of a STANDARD machine, newest first. */
  list(machineArn: string, statusFilter?: ExecutionStatus): ExecutionRecord[] {
    const machine = this.machine(machineArn);
    if (machine.type === 'EXPRESS') {
      throw new SfnApiError('StateMachineTypeNotSupported', 'This operation is not supported by EXPRESS state machines');
    }
    return [...this.executions.values()]
      .map((execution) => execution.record)
      .filter((record) => record.stateMachineArn === machineArn && (!statusFilter || record.status === statusFilter))
      .reverse()
      .sort((a, b) => b.startDate - a.startDate);
  }

  /** Aborts a running execution; stopping one that has already ended changes nothing. */
  async stop(arn: string, error: string | undefined, cause: string | undefined): Promise<number> {
    const execution = this.find(arn);
    const { record } = execution;
    if (record.status !== 'RUNNING') return record.stopDate ?? Date.now();
    const stopDate = Date.now();
    await this.close(execution, {
      status: 'ABORTED',
      stopDate,
      ...(error ? { error } : {}),
      ...(cause ? { cause } : {}),
    });
    return stopDate;
  }

  /**
   * Stops every run without recording an outcome, as if the process had stopped: with a
   * store, the next engine marks them FAILED with `Local.RuntimeRestarted`.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    const running = [...this.executions.values(), ...this.expressRuns].filter((e) => e.record.status === 'RUNNING');
    for (const execution of running) {
      execution.run?.abort();
      this.options.tokens.closeExecution(execution.record.executionArn);
    }
    await Promise.allSettled(running.map((execution) => execution.done));
    await this.saving.catch(() => undefined);
  }

  private prepare(machineArn: string, name: string | undefined, inputText: string | undefined) {
    if (this.closing) throw new Error('the local Step Functions runtime is shutting down');
    const machine = this.machine(machineArn);
    const executionName = name ?? randomUUID();
    checkExecutionName(executionName);
    const text = inputText ?? '{}';
    const input = parseJson(text);
    const arn =
      machine.type === 'EXPRESS'
        ? expressExecutionArn(this.options.scope, machine.name, executionName, randomUUID())
        : executionArn(this.options.scope, machine.name, executionName);
    const record: ExecutionRecord = {
      executionArn: arn,
      stateMachineArn: machine.arn,
      name: executionName,
      status: 'RUNNING',
      startDate: Date.now(),
      input: text,
    };
    return { machine, execution: { record } as Execution, input };
  }

  private launch(machine: PreparedMachine, execution: Execution, input: unknown): void {
    const { record } = execution;
    const incomplete = (error: unknown) => this.options.logger.warn(`sfn facade: history of ${record.executionArn} is incomplete: ${String(error)}`);
    // The execution's span, in the operation's trace: its workers' spans are its children.
    const run = withExecutionSpan(
      operationToolOf(input) ?? machine.name,
      input,
      () =>
        machine.interpreter.run(
          input,
          {
            executionArn: record.executionArn,
            executionName: record.name,
            stateMachineArn: machine.arn,
            stateMachineName: machine.name,
          },
          (event) => {
            try {
              execution.history?.record(event);
            } catch (error) {
              incomplete(error);
            }
          },
        ),
      (started) => started.outcome.then((outcome) => outcome.status),
    );
    execution.run = run;
    // Caught at once: a log that fails early must not be an unhandled rejection.
    const logged = run.logged.catch(incomplete);
    let expressTimer: NodeJS.Timeout | undefined;
    if (machine.type === 'EXPRESS') {
      this.expressRuns.add(execution);
      expressTimer = setTimeout(() => {
        execution.timedOut = true;
        run.abort();
      }, EXPRESS_MAX_MS);
    }
    execution.done = run.outcome
      .then(async (outcome) => {
        clearTimeout(expressTimer);
        this.expressRuns.delete(execution);
        await Promise.race([logged, new Promise((resolve) => setTimeout(resolve, HISTORY_GRACE_MS).unref())]);
        if (this.closing || record.status !== 'RUNNING') return;
        await this.close(execution, this.terminal(execution, outcome));
      })
      .catch((error: unknown) => this.options.logger.error(`sfn facade: could not record the end of ${record.executionArn}: ${String(error)}`));
  }

  private terminal(execution: Execution, outcome: RunOutcome): Partial<ExecutionRecord> & { status: ExecutionStatus } {
    const stopDate = Date.now();
    switch (outcome.status) {
      case 'SUCCEEDED': {
        const output = JSON.stringify(outcome.output ?? null);
        if (Buffer.byteLength(output) > MAX_DATA_BYTES) {
          return { status: 'FAILED', stopDate, error: 'States.DataLimitExceeded', cause: 'The execution output exceeds 262144 bytes' };
        }
        return { status: 'SUCCEEDED', stopDate, output };
      }
      case 'FAILED':
        return { status: 'FAILED', stopDate, ...(outcome.error ? { error: outcome.error } : {}), ...(outcome.cause ? { cause: outcome.cause } : {}) };
      case 'ABORTED':
        // Only the facade aborts runs: StopExecution (already recorded) or the Express time limit.
        return { status: execution.timedOut ? 'TIMED_OUT' : 'ABORTED', stopDate };
      case 'TIMED_OUT':
        return { status: 'TIMED_OUT', stopDate };
    }
  }

  /** Records the end of an execution: history, tokens, persistence, event. */
  private async close(execution: Execution, end: Partial<ExecutionRecord> & { status: ExecutionStatus }): Promise<void> {
    Object.assign(execution.record, end);
    if (end.status === 'ABORTED') execution.run?.abort();
    this.options.tokens.closeExecution(execution.record.executionArn);
    if (!this.executions.has(execution.record.executionArn)) return;
    execution.history?.close(execution.record);
    await this.persist().catch((error: unknown) =>
      this.options.logger.error(`sfn facade: could not persist ${execution.record.executionArn}: ${String(error)}`),
    );
    this.emit(execution.record);
  }

  private find(arn: string): Execution {
    if (parseExecutionArn(arn).kind === 'express') throw expressNotSupported();
    const execution = this.executions.get(arn);
    if (!execution) throw new SfnApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return execution;
  }

  private persist(): Promise<void> {
    const { store } = this.options;
    if (!store) return Promise.resolve();
    this.saving = store.save([...this.executions.values()].map((execution) => execution.record));
    return this.saving;
  }

  /** EventBridge's delivery is decoupled from the service: a failing listener never fails an API call. */
  private emit(record: ExecutionRecord): void {
    const { onStatusChange, logger } = this.options;
    if (!onStatusChange) return;
    const report = (error: unknown) => logger.warn(`sfn facade: status listener failed for ${record.executionArn} (${record.status}): ${String(error)}`);
    try {
      const result: unknown = onStatusChange(buildStatusChangeEvent({ ...record }, this.options.scope));
      if (result instanceof Promise) result.catch(report);
    } catch (error) {
      report(error);
    }
  }
}

/** The input's size is a model constraint, checked with the request (sfn-facade-actions.ts). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SfnApiError('InvalidExecutionInput', 'Invalid State Machine Execution Input: the input is not valid JSON');
  }
}
