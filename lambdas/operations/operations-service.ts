/**
 * The operations core: starts tool executions, tracks them in the record store and
 * answers status, result and cancel questions, whatever dialect asked (DESIGN §4).
 * Every status write is conditional, so a crash, a redelivered event or a race
 * between cancel and completion never loses work or overwrites a terminal state.
 *
 * Crash safety of a start: the record (with its execution's derivable ARN) is written
 * before StartExecution, whose name is fixed by the record, so a retry never starts a
 * second execution and a cancel can always name the execution, started or not. A start
 * that crashed at any point is finished by a retry, by the RUNNING event, or by
 * reconciliation; none of them fails an execution that is running.
 */
import { isTerminal, LOG_LEVELS, type LogLevel, type Dialect, type OperationKey, type OperationRecord, type OperationStatus, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import {
  ExecutionNotFoundError,
  InvalidCursorError,
  MAX_ID_BYTES,
  RecordTooLargeError,
  systemClock,
  type Clock,
  type ExecutionSnapshot,
  type Logger,
  type Page,
  type RecordStore,
  type ResultShaper,
  type WorkflowEngine,
} from './ports.ts';
import { parseResultUri, resultKeyFor, settleResult, type ResultSpill, type StoredResult } from './result-store.ts';
import { endRecord } from './record-updates.ts';
import type { ToolCatalog, ToolSpec } from './tool-spec.ts';
import { argumentsHash, executionNameFor, mintId } from './fingerprint.ts';
import { expiryFor, runningExpiry, statusMessageFor, terminalChanges } from './execution-outcome.ts';
import { ActiveSlots, type RepairBudget } from './active-slots.ts';
import { checkExecutionInput, checkId, executionInputOf } from './execution-input.ts';
import { SyncRuns, type SyncOrHandOff, type SyncRunInput, type SyncStep, type SyncStepInput } from './sync-runs.ts';
import { DEFAULT_LIMITS, type OperationsLimits } from './operations-limits.ts';
import { InputRequests } from './input-requests.ts';
import type { InputProtocol } from './input-protocol.ts';
import { RunReports } from './run-reports.ts';
import { needsReconcile } from './reconcile-cadence.ts';
import type { StartOperationInput } from './start-operation-input.ts';

export { MAX_EXECUTION_INPUT_BYTES } from './execution-input.ts';
export type { SyncOrHandOff, SyncRunInput, SyncStep, SyncStepInput } from './sync-runs.ts';
export { DEFAULT_LIMITS, type OperationsLimits } from './operations-limits.ts';
export type { ResultSpill } from './result-store.ts';
export type { StartOperationInput } from './start-operation-input.ts';
import { consoleLogger } from '../logging/logger.ts';

/** Everything the core is built from: its ports, and what the app wires in beside them. */
export interface OperationsOptions {
  store: RecordStore;
  engine: WorkflowEngine;
  /** The questions executions may ask and the answers they take, in the wire's words (lambdas/mcp/input/mcp-input-protocol.ts). */
  input: InputProtocol;
  /** @default DEFAULT_LIMITS */
  limits?: OperationsLimits;
  /** @default systemClock */
  clock?: Clock;
  /** @default consoleLogger */
  logger?: Logger;
  /** Where outputs too large for a record go; without it they stay in the record (up to its size limit). */
  results?: ResultSpill;
  /** Checks and shapes a finished result once, at completion (the protocol edge's rules). Without it, outcomes stay raw and are shaped on read. */
  shapeResult?: ResultShaper;
  /** The tools this deploy serves: a running operation of a tool not among them, whose execution is gone, is failed at once. */
  catalog?: ToolCatalog;
}

/** The one way to build the operations core. */
export function createOperations(options: OperationsOptions): OperationsService {
  return new OperationsService(options);
}

const NON_TERMINAL: readonly OperationStatus[] = ['submitted', 'working', 'input_required'];
/** Dialects whose operations `notifications/cancelled` may name by request id; task dialects cancel with tasks/cancel. */
const CANCELABLE_BY_REQUEST_ID: readonly Dialect[] = ['sep-1391', 'sync', 'handle'];
/** A record with no execution this long after its creation lost its starter (a crash between steps). */
const STALLED_START_MS = 60_000;
const CANCEL_ERROR = 'Mcp.Canceled';
/** How long a `logging/setLevel` is remembered. */
const LOG_LEVEL_SECONDS = 24 * 3600;

export class OperationsService {
  readonly #slots: ActiveSlots;
  readonly #syncRuns: SyncRuns;
  /** Questions executions ask the client mid-run, and the answers that resume them. */
  readonly inputs: InputRequests;
  /** Progress and log lines executions report while they run. */
  readonly reports: RunReports;

  readonly limits: OperationsLimits;
  private readonly store: RecordStore;
  private readonly engine: WorkflowEngine;
  private readonly clock: Clock;
  private readonly results: ResultSpill | undefined;
  private readonly options: OperationsOptions;

  /** Built through `createOperations`. */
  constructor(options: OperationsOptions) {
    const { store, engine } = options;
    const limits = options.limits ?? DEFAULT_LIMITS;
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? consoleLogger;
    this.options = options;
    this.store = store;
    this.engine = engine;
    this.limits = limits;
    this.clock = clock;
    this.results = options.results;
    this.#slots = new ActiveSlots(store, limits.maxActiveOperations, (key, budget) => this.isOver(key, budget), logger);
    this.#syncRuns = new SyncRuns({
      store,
      engine,
      limits,
      logger,
      protocol: options.input,
      start: (input) => this.start(input),
      waitFor: (key, boundMs, until, onRead) => this.waitFor(key, boundMs, until, onRead),
      cancel: (key, reason) => this.cancel(key, reason),
      mintToken: () => this.mintToken(),
    });
    this.inputs = new InputRequests({ store, engine, clock, logger, protocol: options.input, findByExecutionName: (name) => this.findByExecutionName(name) });
    this.reports = new RunReports({ store, clock, findByExecutionName: (name) => this.findByExecutionName(name) });
  }

  /** The keepAlive granted: the request clamped by the tool's and the server's maximum. */
  grantKeepAlive(tool: ToolSpec, requested: number | null | undefined): number | null {
    const toolMax = tool.timing.maxKeepAliveSeconds;
    const max = toolMax === null ? this.limits.maxKeepAliveSeconds : Math.min(toolMax, this.limits.maxKeepAliveSeconds);
    if (requested === null) {
      return this.limits.allowUnlimitedKeepAlive && toolMax === null ? null : max;
    }
    const wanted = requested ?? tool.timing.keepAliveSeconds;
    return Math.max(1, Math.min(Math.floor(wanted), max));
  }

  /**
   * Lifecycle steps 1-3: conditional create, claim an active slot, StartExecution with the
   * record's deterministic name. Two writes and one StartExecution: the record is
   * `working` from its creation (a start that never reached Step Functions is failed by
   * reconciliation once the stall window has passed). Idempotent per (owner, token,
   * tool, arguments). Everything a caller can get wrong is refused before any write.
   */
  async start(input: StartOperationInput): Promise<OperationRecord> {
    const { tool } = input;
    checkId('token', input.token);
    if (input.requestId !== undefined) checkId('request id', input.requestId);
    const capabilities = this.options.input.capabilitiesOf(input.clientCapabilities ?? {});
    const executionInput = executionInputOf(input.ownerId, input.token, tool, input.arguments, capabilities);
    checkExecutionInput(executionInput);
    const inputKinds = this.options.input.kindsOf(capabilities);

    const now = this.clock.now();
    const hash = argumentsHash(tool.name, input.arguments);
    const keepAliveSeconds = this.grantKeepAlive(tool, input.keepAliveSeconds);
    const executionName = executionNameFor(input.ownerId, input.token, now);
    const draft: OperationRecord = {
      ownerId: input.ownerId,
      token: input.token,
      tool: tool.name,
      argumentsHash: hash,
      dialect: input.dialect,
      status: 'working',
      statusMessage: statusMessageFor('working'),
      executionName,
      // Derivable before the start, so a cancel racing the start can always stop it.
      executionArn: this.engine.executionArnFor(tool.stateMachineArn, executionName),
      createdAt: now,
      updatedAt: now,
      keepAliveSeconds,
      pollIntervalSeconds: tool.timing.pollIntervalSeconds,
      expiresAt: runningExpiry(now, tool.timing.maxRunSeconds, keepAliveSeconds ?? this.limits.maxKeepAliveSeconds),
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
      ...(inputKinds.length === 0 ? {} : { inputKinds }),
      // The result is checked against the tool as this execution runs it, whatever is deployed when it ends.
      resultContract: tool.outputSchema ? { outputSchema: tool.outputSchema } : {},
    };
    // The record first, then its slot: a slot whose record is missing is then always a leak
    // (a crash, or an expired record), never a start still on its way.
    const created = await this.store.create(draft);
    if (!created.created) return this.resume(created.existing, input, hash, executionInput);
    await this.claimSlot(created.record, tool, { discardOnRefusal: true, requestId: input.requestId });
    return this.launch(created.record, tool, executionInput);
  }

  /**
   * Takes the operation's active slot, and with it, in the same write, the request id's
   * alias when the call can be cancelled by id. At the limit the start is refused; a record
   * this very start created is taken back first, so a refused start leaves nothing behind.
   */
  private async claimSlot(
    record: OperationRecord,
    tool: ToolSpec,
    options: { discardOnRefusal: boolean; requestId: string | undefined },
  ): Promise<void> {
    const key = { ownerId: record.ownerId, token: record.token };
    const { requestId } = options;
    const cancelableById = requestId !== undefined && CANCELABLE_BY_REQUEST_ID.includes(record.dialect);
    const alias = cancelableById ? { requestId, expiresAt: this.aliasExpiry(record) } : undefined;
    if ((await this.#slots.claim(key, alias)) !== 'refused') {
      if (requestId !== undefined && !cancelableById) await this.store.deleteRequestAlias(record.ownerId, requestId);
      return;
    }
    if (options.discardOnRefusal) await this.store.discard(key, ['working']);
    throw this.#slots.limitExceeded(tool.timing.pollIntervalSeconds);
  }

  /** The same call again: the first attempt's answer, or the rest of its start if it crashed mid-way. */
  private async resume(record: OperationRecord, input: StartOperationInput, hash: string, executionInput: unknown): Promise<OperationRecord> {
    if (record.tool !== input.tool.name || record.argumentsHash !== hash || record.dialect !== input.dialect) {
      throw new OperationError('TOKEN_REUSED', 'The token was already used for a different tool call');
    }
    this.assertLive(record);
    // Asking a question or ending proves the execution started; `working` does not, so the
    // rest of the start runs again. Both steps are idempotent: the slot is already held, or
    // taken now, and StartExecution of the same name and input starts nothing new.
    if (record.status !== 'working' && record.status !== 'submitted') {
      await this.rememberRequest(record, input.requestId);
      return record;
    }
    await this.claimSlot(record, input.tool, { discardOnRefusal: false, requestId: input.requestId });
    return this.launch(record, input.tool, executionInput);
  }

  /**
   * Which operation a JSON-RPC id names is the latest `tools/call` with that id: a call
   * that can be cancelled by id takes the alias, any other call takes it away.
   */
  private async rememberRequest(record: OperationRecord, requestId: string | undefined): Promise<void> {
    if (requestId === undefined) return;
    if (CANCELABLE_BY_REQUEST_ID.includes(record.dialect)) {
      await this.store.putRequestAlias(record.ownerId, requestId, { token: record.token, expiresAt: this.aliasExpiry(record) });
    } else {
      await this.store.deleteRequestAlias(record.ownerId, requestId);
    }
  }

  private async launch(record: OperationRecord, tool: ToolSpec, executionInput: unknown): Promise<OperationRecord> {
    const executionArn = record.executionArn ?? this.engine.executionArnFor(tool.stateMachineArn, record.executionName);
    if (tool.executionInput === 'arguments') {
      // The execution's input will not name its operation: a pointer by execution name does.
      await this.store.putExecutionPointer(record.executionName, record, this.aliasExpiry(record));
    }
    try {
      await this.engine.start({ stateMachineArn: tool.stateMachineArn, name: record.executionName, input: executionInput });
    } catch (error) {
      await this.settleFailedStart(record, executionArn, error);
    }
    // No write: the record says `working` already. One read tells whether a cancel landed
    // during the start (its StopExecution found nothing to stop), or status-sync got further.
    const current = await this.read(record);
    if (current.status === 'canceled') await this.stopQuietly(executionArn, 'Canceled while it was starting');
    return current;
  }

  /**
   * StartExecution failed (throttled, failed after the SDK's retries, or its answer lost):
   * the engine is asked whether the execution exists by its derived name. If it does, the
   * start succeeded and returns normally. If it does not, the record ends `failed` and its
   * slot is given back before the error goes to the caller, so a failed start never holds a
   * slot, and a client that retries with a new id never runs the work twice. If the engine
   * cannot tell, a StopExecution by the derived ARN makes sure nothing runs, and the record
   * ends the same way; if that fails too, the record stays `working` for slot repair and
   * reconciliation.
   */
  private async settleFailedStart(record: OperationRecord, executionArn: string, error: unknown): Promise<void> {
    const startError = new OperationError('INTERNAL', 'The workflow engine did not start the execution', { cause: error });
    try {
      await this.engine.describe(executionArn);
      return; // It runs: the start succeeded and only its answer was lost.
    } catch (describeError) {
      if (!(describeError instanceof ExecutionNotFoundError)) {
        // Unknown: a StopExecution by the derived ARN settles it. Stopped or absent, nothing
        // runs for the record, which then ends as below (a client's retry runs the work once).
        try {
          await this.stopQuietly(executionArn, 'Its start could not be confirmed');
        } catch {
          // Still unknown: the record stays `working` for slot repair and reconciliation.
          throw startError;
        }
      }
    }
    const now = this.clock.now();
    const outcome: Outcome = { kind: 'internal-error', message: `${FAILED_START_PREFIX}the workflow engine did not accept the execution (${errorNameOf(error)})` };
    await this.finish(record, {
      status: 'failed',
      statusMessage: statusMessageFor('failed', outcome),
      updatedAt: now,
      completedAt: now,
      outcome,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    // A cancel that came meanwhile has ended the record already: nothing started for it to stop.
    throw startError;
  }

  /** Runs a tool to completion within its sync bound and returns how it ended (see sync-runs.ts). */
  runSync(input: SyncRunInput): Promise<Outcome> {
    return this.#syncRuns.runSync(input);
  }

  /** One round of a call the client waits on, which may stop at a question (see sync-runs.ts). */
  runSyncStep(input: SyncStepInput): Promise<SyncStep> {
    return this.#syncRuns.runSyncStep(input);
  }

  /** A round ended at questions: the expiry of the state its retry presents (see sync-runs.ts). */
  holdForRetry(record: OperationRecord, tool: ToolSpec, ttlSeconds: number): Promise<number> {
    return this.#syncRuns.holdForRetry(record, tool, ttlSeconds, this.clock.now());
  }

  /** `runSync` for a client that can come back later: past the bound, the running record is handed off. */
  runSyncOrHandOff(input: SyncRunInput & { dialect: Dialect }): Promise<SyncOrHandOff> {
    return this.#syncRuns.runSyncOrHandOff(input);
  }

  /**
   * The current record: one read while status-sync keeps it current. A record not
   * updated for a reconcile interval (which backs off as the operation ages, see
   * reconcile-cadence.ts) is checked against its execution by exactly one poller: the one
   * whose compare-and-set of `updatedAt` wins. So there is at most one DescribeExecution
   * per running operation per interval, however many poll.
   */
  async get(key: OperationKey): Promise<OperationRecord> {
    return this.refresh(await this.read(key));
  }

  /** `get` with the record already read. */
  private async refresh(record: OperationRecord): Promise<OperationRecord> {
    const now = this.clock.now();
    if (!needsReconcile(record, now, this.limits)) return record;
    const claimed = await this.store.transition(record, [record.status], { updatedAt: now }, { ifUpdatedAt: record.updatedAt });
    if (!claimed) return record;
    return this.reconcile(claimed);
  }

  /** Reads a live record: not found and expired are errors. An id too long for a key names nothing. */
  async read(key: OperationKey): Promise<OperationRecord> {
    if (Buffer.byteLength(key.token) > MAX_ID_BYTES) throw new OperationError('NOT_FOUND', 'Operation not found');
    const record = await this.store.get(key);
    if (!record) throw new OperationError('NOT_FOUND', 'Operation not found');
    this.assertLive(record);
    return record;
  }

  private assertLive(record: OperationRecord): void {
    // DynamoDB's TTL deletes items up to days late, so expiry is enforced here.
    if (record.expiresAt !== undefined && record.expiresAt * 1000 <= this.clock.now()) {
      throw new OperationError('EXPIRED', 'Operation has expired');
    }
  }

  /** Settles a non-terminal record with its execution, asked by the derivable ARN. */
  private async reconcile(record: OperationRecord): Promise<OperationRecord> {
    const executionArn = record.executionArn;
    let snapshot: ExecutionSnapshot;
    try {
      if (!executionArn) throw new ExecutionNotFoundError(record.executionName);
      snapshot = await this.engine.describe(executionArn);
    } catch (error) {
      if (!(error instanceof ExecutionNotFoundError)) return record; // Engine unreachable: the record still answers.
      // A deploy that removed the tool deleted its state machine, and with it the execution.
      if (this.options.catalog && !this.options.catalog.get(record.tool)) {
        return this.fail(record, 'The tool was removed while this ran: its execution no longer exists');
      }
      // Give a start in progress its time; after that, nothing will ever run this operation.
      if (this.clock.now() - record.createdAt < STALLED_START_MS) return record;
      return this.fail(record, 'The execution for this operation never started or no longer exists');
    }
    return (await this.applyToRecord(record, snapshot)) ?? record;
  }

  /**
   * Whether a slot's operation is over: its record is terminal, expired or gone, or its
   * execution ended unseen. Runs only when the principal is at its limit (slot repair).
   * An expired record that still runs is abandoned (no client can read it any more): its
   * execution is stopped. A record past the stall window is reconciled at the cadence a
   * poll would reconcile it, so a lost start or a lost end frees its slot, and repairs
   * cost at most one DescribeExecution per operation per interval (and `budget` per repair).
   */
  private async isOver(key: OperationKey, budget: RepairBudget): Promise<boolean> {
    const record = await this.store.get(key);
    if (!record || isTerminal(record.status)) return true;
    if (this.isExpired(record)) {
      await this.abandon(record, 'The operation expired before its execution ended');
      return true;
    }
    if (this.clock.now() - record.createdAt < STALLED_START_MS) return false;
    if (budget.engineChecks <= 0 || !needsReconcile(record, this.clock.now(), this.limits)) return false;
    budget.engineChecks--;
    return isTerminal((await this.refresh(record)).status);
  }

  private isExpired(record: OperationRecord): boolean {
    return record.expiresAt !== undefined && record.expiresAt * 1000 <= this.clock.now();
  }

  /**
   * Ends a record no client will come back for (it expired, or the only call that could
   * read it is over): stops its execution and ends the record canceled, which gives its
   * slot back. Nothing is kept past this: the record expires at once.
   */
  async abandon(key: OperationKey, reason: string): Promise<void> {
    const record = await this.store.get(key);
    if (!record || isTerminal(record.status)) return;
    if (record.executionArn) await this.stopQuietly(record.executionArn, reason);
    const now = this.clock.now();
    await this.finish(record, {
      status: 'canceled',
      statusMessage: reason,
      updatedAt: now,
      completedAt: now,
      expiresAt: Math.floor(now / 1000),
    });
  }

  private async fail(record: OperationRecord, message: string): Promise<OperationRecord> {
    const now = this.clock.now();
    const outcome: Outcome = { kind: 'internal-error', message };
    const failed = await this.finish(record, {
      status: 'failed',
      statusMessage: statusMessageFor('failed', outcome),
      updatedAt: now,
      completedAt: now,
      outcome,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    return failed ?? (await this.read(record));
  }

  /**
   * A terminal transition of `record` (as last read); the one that wins it gives the active
   * slot back. Pending questions go and reports are trimmed with it (see `endRecord`).
   */
  private async finish(record: OperationRecord, changes: Parameters<RecordStore['transition']>[2]): Promise<OperationRecord | undefined> {
    const key: OperationKey = { ownerId: record.ownerId, token: record.token };
    const done = await endRecord(this.store, this.clock, record, NON_TERMINAL, changes);
    // The alias the start recorded with the slot goes with it (unless a later call took it).
    if (done) await this.#slots.release(key, CANCELABLE_BY_REQUEST_ID.includes(done.dialect) ? done.requestId : undefined);
    return done;
  }

  /**
   * Applies an execution's state to its record (status-sync and reconciliation).
   * Terminal records are never overwritten; redelivery is harmless. Returns the record
   * as it stands after the write, or `undefined` when there is none or the execution is
   * not the record's (e.g. an event of a token reused after expiry).
   */
  async applyExecution(key: OperationKey, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    const record = await this.store.get(key);
    return record && this.applyToRecord(record, snapshot);
  }

  /** `applyExecution` with the record already read; the conditional writes make a stale read harmless. */
  private async applyToRecord(record: OperationRecord, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    const key: OperationKey = { ownerId: record.ownerId, token: record.token };
    if (!isExecutionOf(record, snapshot.executionArn)) return undefined;
    if (isTerminal(record.status)) {
      // Canceled before its execution started, or ended as never started while a StartExecution
      // was still on its way: the execution that came late runs for no one, and is stopped here.
      if (snapshot.status === 'RUNNING' && (record.status === 'canceled' || isFailedStart(record))) {
        await this.stopQuietly(snapshot.executionArn, record.status === 'canceled' ? 'Canceled while it was starting' : 'Its start had already failed');
      }
      return record;
    }
    const now = this.clock.now();
    const terminal = terminalChanges(snapshot, record.keepAliveSeconds, now);
    if (terminal) {
      const { shapeResult } = this.options;
      try {
        return (await this.finish(record, await settleResult(this.results, shapeResult, record, terminal))) ?? (await this.store.get(key));
      } catch (error) {
        if (!(error instanceof RecordTooLargeError)) throw error;
      }
      // Still too large with its questions cleared and reports trimmed: the result goes to the bucket, whatever its size.
      if (this.results && terminal.outcome?.kind === 'result') {
        try {
          const spilled = await settleResult(this.results, shapeResult, record, terminal, true);
          return (await this.finish(record, spilled)) ?? (await this.store.get(key));
        } catch (error) {
          if (!(error instanceof RecordTooLargeError)) throw error;
        }
      }
      // Nothing left to move out of the record: say so instead of losing the operation.
      const outcome: Outcome = { kind: 'internal-error', message: 'The tool result is larger than the server can store' };
      const tooLarge = { ...terminal, status: 'failed' as const, statusMessage: statusMessageFor('failed', outcome), outcome };
      return (await this.finish(record, tooLarge)) ?? (await this.store.get(key));
    }
    // Records are created `working` now; one created `submitted` by an earlier version still moves on.
    if (record.status === 'submitted' && snapshot.status === 'RUNNING') {
      const working = await this.store.transition(key, ['submitted'], {
        status: 'working',
        statusMessage: statusMessageFor('working'),
        executionArn: snapshot.executionArn,
        updatedAt: now,
      });
      return working ?? (await this.store.get(key));
    }
    return record;
  }

  /**
   * A stored result of `ownerId`, while the operation it belongs to lives (its keepAlive).
   * Another owner's result, an unknown id and an expired operation all read as absent.
   */
  async readResult(ownerId: string, uri: string): Promise<StoredResult | undefined> {
    const parsed = parseResultUri(uri);
    if (!parsed || !this.results) return undefined;
    try {
      await this.read({ ownerId, token: parsed.token });
    } catch (error) {
      if (error instanceof OperationError) return undefined;
      throw error;
    }
    return this.results.store.get(resultKeyFor(ownerId, parsed.resultId));
  }

  /**
   * Stops the execution and marks the operation canceled. The execution decides how it
   * ended: one that finished before the stop keeps its real outcome (and result). A
   * terminal operation is returned unchanged, so cancelling twice changes nothing.
   */
  async cancel(key: OperationKey, reason = 'Canceled by the client'): Promise<OperationRecord> {
    const record = await this.read(key);
    if (isTerminal(record.status)) return record;
    const executionArn = record.executionArn;
    let snapshot: ExecutionSnapshot | undefined;
    let gone = false;
    if (executionArn) {
      let stopped = false;
      try {
        await this.engine.stop(executionArn, { error: CANCEL_ERROR, cause: reason });
        stopped = true;
        snapshot = await this.engine.describe(executionArn);
      } catch (error) {
        // Not started yet: the record says canceled, and the start stops what it starts.
        // Stopped, but how it ended is unknown (the DescribeExecution failed): a successful
        // StopExecution is a successful cancel; the ABORTED event or a reconcile settles it.
        if (!stopped && !(error instanceof ExecutionNotFoundError)) {
          throw new OperationError('INTERNAL', 'The workflow engine did not stop the execution', { cause: error });
        }
        gone = !stopped;
      }
    }
    if (snapshot && terminalChanges(snapshot, record.keepAliveSeconds, this.clock.now())) {
      return (await this.applyToRecord(record, snapshot)) ?? (await this.read(key));
    }
    const now = this.clock.now();
    // A deploy that removed the tool took its machine and execution: nothing was left to stop.
    const removed = gone && this.options.catalog !== undefined && !this.options.catalog.get(record.tool);
    const canceled = await this.finish(record, {
      status: 'canceled',
      statusMessage: removed ? 'The operation was canceled; its tool was removed while it ran, and its execution with it.' : statusMessageFor('canceled'),
      updatedAt: now,
      completedAt: now,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    return canceled ?? (await this.read(key));
  }

  private async stopQuietly(executionArn: string, cause: string): Promise<void> {
    try {
      await this.engine.stop(executionArn, { error: CANCEL_ERROR, cause });
    } catch (error) {
      if (!(error instanceof ExecutionNotFoundError)) throw error;
    }
  }

  /** Waits until the operation is terminal or `boundMs` passes; returns the last record seen. */
  waitForTerminal(key: OperationKey, boundMs: number): Promise<OperationRecord> {
    return this.waitFor(key, boundMs);
  }

  /**
   * Waits until the operation is terminal, `until` holds for it (e.g. it asks a question)
   * or `boundMs` passes; returns the last record seen. Reads the store, so any instance can
   * wait on any operation; `onRead` sees every record read.
   */
  async waitFor(
    key: OperationKey,
    boundMs: number,
    until?: (record: OperationRecord) => boolean,
    onRead?: (record: OperationRecord) => Promise<void>,
  ): Promise<OperationRecord> {
    const deadline = this.clock.now() + boundMs;
    let delay = 50;
    for (;;) {
      const record = await this.get(key);
      // Each record read goes to the caller (a waiting call streams its new reports from it).
      await onRead?.(record);
      const left = deadline - this.clock.now();
      if (isTerminal(record.status) || until?.(record) || left <= 0) return record;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
      delay = Math.min(delay * 2, 1000, record.pollIntervalSeconds * 1000);
    }
  }

  /** The operation the latest cancelable `tools/call` with this typed request id started, while it lives. */
  async findByRequestId(ownerId: string, requestId: string): Promise<OperationKey | undefined> {
    if (Buffer.byteLength(requestId) > MAX_ID_BYTES) return undefined;
    const alias = await this.store.findRequestAlias(ownerId, requestId);
    if (!alias || alias.expiresAt * 1000 <= this.clock.now()) return undefined;
    return { ownerId, token: alias.token };
  }

  /** The operation an execution runs, for executions whose input does not say (see `putExecutionPointer`). */
  async findByExecutionName(executionName: string): Promise<OperationKey | undefined> {
    const pointer = await this.store.findExecutionPointer(executionName);
    if (!pointer || pointer.expiresAt * 1000 <= this.clock.now()) return undefined;
    return { ownerId: pointer.ownerId, token: pointer.token };
  }

  /** Remembers the owner's `logging/setLevel` for a day (a stateless server has no session to keep it in). */
  async setLogLevel(ownerId: string, level: LogLevel): Promise<void> {
    await this.store.putLogLevel(ownerId, level, Math.ceil(this.clock.now() / 1000) + LOG_LEVEL_SECONDS);
  }

  /** The owner's log level while it lives; `undefined` when none was set (the caller picks a default). */
  async logLevel(ownerId: string): Promise<LogLevel | undefined> {
    const found = await this.store.findLogLevel(ownerId);
    if (!found || found.expiresAt * 1000 <= this.clock.now()) return undefined;
    return (LOG_LEVELS as readonly string[]).includes(found.level) ? (found.level as LogLevel) : undefined;
  }

  /** The owner's live operations, newest first. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    let page: Page<OperationRecord>;
    try {
      page = await this.store.listByOwner(ownerId, options);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new OperationError('INVALID_CURSOR', 'Invalid cursor', { cause: error });
      throw error;
    }
    const now = this.clock.now();
    return { ...page, items: page.items.filter((r) => r.expiresAt === undefined || r.expiresAt * 1000 > now) };
  }

  /** An alias lives as long as its operation can: the record's expiry (the server's longest keepAlive when unlimited). */
  private aliasExpiry(record: OperationRecord): number {
    return record.expiresAt ?? Math.ceil(record.createdAt / 1000) + 366 * 24 * 3600 + this.limits.maxKeepAliveSeconds;
  }

  /** A fresh server-minted operation id (128 random bits). */
  mintToken(): string {
    return mintId();
  }
}

/** How the outcome of a start that failed (see `settleFailedStart`) begins. */
const FAILED_START_PREFIX = 'could not start: ';

/** A record ended because its StartExecution failed and the engine had no such execution. */
function isFailedStart(record: OperationRecord): boolean {
  return record.status === 'failed' && record.outcome?.kind === 'internal-error' && record.outcome.message.startsWith(FAILED_START_PREFIX);
}

/** An error's name only: what a client may be shown of an engine failure (its message may carry ARNs). */
function errorNameOf(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown error';
}

/** Whether an execution is the record's own: its ARN ends with the record's execution name. */
function isExecutionOf(record: OperationRecord, executionArn: string): boolean {
  return executionArn.endsWith(`:${record.executionName}`);
}
