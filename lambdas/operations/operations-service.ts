/**
 * The operations core: starts tool executions, tracks them in the record store and
 * answers status, result and cancel questions, whatever dialect asked (DESIGN §4).
 * Every status write is conditional, so a crash, a redelivered event or a race
 * between cancel and completion never loses work or overwrites a terminal state.
 *
 * `createOperations` builds it from its parts, one per stage of an operation's life:
 * starts.ts (start, slot claim, launch), settlement.ts (reconcile, finish, cancel,
 * abandon), operation-reads.ts (live and current reads, waits), sync-runs.ts (calls a
 * client waits on), input-requests.ts and run-reports.ts (what a running execution asks
 * and reports). Each part gets the others it needs as ports; `OperationsService` is the
 * one face the edges call, and holds the lookups only the edges make.
 */
import { ActiveSlots } from './active-slots.ts';
import { mintId } from './fingerprint.ts';
import { InputRequests } from './input-requests.ts';
import { LOG_LEVELS, type Dialect, type LogLevel, type OperationKey, type OperationRecord, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { OperationReads } from './operation-reads.ts';
import { contextOf, type OperationsContext, type OperationsOptions } from './operations-options.ts';
import type { OperationsLimits } from './operations-limits.ts';
import { InvalidCursorError, MAX_ID_BYTES, type ExecutionSnapshot, type Page } from './ports.ts';
import { parseResultUri, resultKeyFor, type StoredResult } from './result-store.ts';
import { RunReports } from './run-reports.ts';
import { Settlement } from './settlement.ts';
import { Starts } from './starts.ts';
import type { StartOperationInput } from './start-operation-input.ts';
import { SyncRuns, type SyncOrHandOff, type SyncRunInput, type SyncStep, type SyncStepInput } from './sync-runs.ts';
import type { ToolSpec } from './tool-spec.ts';

export { MAX_EXECUTION_INPUT_BYTES } from './execution-input.ts';
export type { SyncOrHandOff, SyncRunInput, SyncStep, SyncStepInput } from './sync-runs.ts';
export { DEFAULT_LIMITS, type OperationsLimits } from './operations-limits.ts';
export type { OperationsOptions } from './operations-options.ts';
export type { ResultSpill } from './result-store.ts';
export type { StartOperationInput } from './start-operation-input.ts';

/** The one way to build the operations core: each part over the same context, wired to the others it needs. */
export function createOperations(options: OperationsOptions): OperationsService {
  const context = contextOf(options);
  const { store, engine, clock, logger, limits, input: protocol } = context;
  const settlement = new Settlement(context);
  const reads = new OperationReads(context, settlement);
  const slots = new ActiveSlots({ store, limit: limits.maxActiveOperations, holders: settlement, logger });
  const starts = new Starts(context, slots, settlement);
  return new OperationsService({
    context,
    starts,
    settlement,
    reads,
    syncRuns: new SyncRuns({ store, engine, limits, logger, protocol, starts, reads, settlement }),
    inputs: new InputRequests({ store, engine, clock, logger, protocol, executions: reads }),
    reports: new RunReports({ store, clock, executions: reads }),
  });
}

/** The parts `createOperations` builds the service from. */
export interface OperationsParts {
  context: OperationsContext;
  starts: Starts;
  settlement: Settlement;
  reads: OperationReads;
  syncRuns: SyncRuns;
  inputs: InputRequests;
  reports: RunReports;
}

/** How long a `logging/setLevel` is remembered. */
const LOG_LEVEL_SECONDS = 24 * 3600;

/** The core's one face to the edges: the lifecycle steps of the parts, and the lookups only the edges make. */
export class OperationsService {
  readonly limits: OperationsLimits;
  /** Questions executions ask the client mid-run, and the answers that resume them. */
  readonly inputs: InputRequests;
  /** Progress and log lines executions report while they run. */
  readonly reports: RunReports;
  readonly #parts: OperationsParts;

  /** Built by `createOperations`. */
  constructor(parts: OperationsParts) {
    this.#parts = parts;
    this.limits = parts.context.limits;
    this.inputs = parts.inputs;
    this.reports = parts.reports;
  }

  /** The keepAlive granted: the request clamped by the tool's and the server's maximum. */
  grantKeepAlive(tool: ToolSpec, requested: number | null | undefined): number | null {
    return this.#parts.starts.grantKeepAlive(tool, requested);
  }

  /** Starts an operation, idempotently per (owner, token, tool, arguments); see starts.ts. */
  start(input: StartOperationInput): Promise<OperationRecord> {
    return this.#parts.starts.start(input);
  }

  /** Runs a tool to completion within its sync bound and returns how it ended (see sync-runs.ts). */
  runSync(input: SyncRunInput): Promise<Outcome> {
    return this.#parts.syncRuns.runSync(input);
  }

  /** One round of a call the client waits on, which may stop at a question (see sync-runs.ts). */
  runSyncStep(input: SyncStepInput): Promise<SyncStep> {
    return this.#parts.syncRuns.runSyncStep(input);
  }

  /** A round ended at questions: the expiry of the state its retry presents (see sync-runs.ts). */
  holdForRetry(record: OperationRecord, tool: ToolSpec, ttlSeconds: number): Promise<number> {
    return this.#parts.syncRuns.holdForRetry(record, tool, ttlSeconds, this.#parts.context.clock.now());
  }

  /** `runSync` for a client that can come back later: past the bound, the running record is handed off. */
  runSyncOrHandOff(input: SyncRunInput & { dialect: Dialect }): Promise<SyncOrHandOff> {
    return this.#parts.syncRuns.runSyncOrHandOff(input);
  }

  /** The current record, checked against its execution when status-sync has been quiet for a reconcile interval (see operation-reads.ts). */
  readCurrent(key: OperationKey): Promise<OperationRecord> {
    return this.#parts.reads.readCurrent(key);
  }

  /** Reads a live record as stored: not found and expired are errors. */
  readLive(key: OperationKey): Promise<OperationRecord> {
    return this.#parts.reads.readLive(key);
  }

  /** Ends a record no client will come back for: its execution stopped, the record canceled and expired at once. */
  abandon(key: OperationKey, reason: string): Promise<void> {
    return this.#parts.settlement.abandon(key, reason);
  }

  /** Applies an execution's state to its record (status-sync); see settlement.ts. */
  applyExecution(key: OperationKey, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    return this.#parts.settlement.applyExecution(key, snapshot);
  }

  /** Stops the execution and marks the operation canceled, unless it ended first; see settlement.ts. */
  cancel(key: OperationKey, reason?: string): Promise<OperationRecord> {
    return this.#parts.settlement.cancel(key, reason);
  }

  /**
   * A stored result of `ownerId`, while the operation it belongs to lives (its keepAlive).
   * Another owner's result, an unknown id and an expired operation all read as absent.
   */
  async readResult(ownerId: string, uri: string): Promise<StoredResult | undefined> {
    const parsed = parseResultUri(uri);
    const { results } = this.#parts.context;
    if (!parsed || !results) return undefined;
    try {
      await this.#parts.reads.readLive({ ownerId, token: parsed.token });
    } catch (error) {
      if (error instanceof OperationError) return undefined;
      throw error;
    }
    return results.store.get(resultKeyFor(ownerId, parsed.resultId));
  }

  /** Waits until the operation is terminal or `boundMs` passes; returns the last record seen. */
  waitForTerminal(key: OperationKey, boundMs: number): Promise<OperationRecord> {
    return this.#parts.reads.waitFor(key, boundMs);
  }

  /** Waits until the operation is terminal, `until` holds for it, `boundMs` passes or `signal` aborts (see operation-reads.ts). */
  waitFor(
    key: OperationKey,
    boundMs: number,
    until?: (record: OperationRecord) => boolean,
    onRead?: (record: OperationRecord) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<OperationRecord> {
    return this.#parts.reads.waitFor(key, boundMs, until, onRead, signal);
  }

  /** The operation the latest cancelable `tools/call` with this typed request id started, while it lives. */
  async findByRequestId(ownerId: string, requestId: string): Promise<OperationKey | undefined> {
    if (Buffer.byteLength(requestId) > MAX_ID_BYTES) return undefined;
    const { store, clock } = this.#parts.context;
    const alias = await store.findRequestAlias(ownerId, requestId);
    if (!alias || alias.expiresAt * 1000 <= clock.now()) return undefined;
    return { ownerId, token: alias.token };
  }

  /** The operation an execution runs, for executions whose input does not say. */
  findByExecutionName(executionName: string): Promise<OperationKey | undefined> {
    return this.#parts.reads.findByExecutionName(executionName);
  }

  /** Remembers the owner's `logging/setLevel` for a day (a stateless server has no session to keep it in). */
  async setLogLevel(ownerId: string, level: LogLevel): Promise<void> {
    const { store, clock } = this.#parts.context;
    await store.putLogLevel(ownerId, level, Math.ceil(clock.now() / 1000) + LOG_LEVEL_SECONDS);
  }

  /** The owner's log level while it lives; `undefined` when none was set (the caller picks a default). */
  async logLevel(ownerId: string): Promise<LogLevel | undefined> {
    const { store, clock } = this.#parts.context;
    const found = await store.findLogLevel(ownerId);
    if (!found || found.expiresAt * 1000 <= clock.now()) return undefined;
    return (LOG_LEVELS as readonly string[]).includes(found.level) ? (found.level as LogLevel) : undefined;
  }

  /** The owner's live operations, newest first. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    const { store, clock } = this.#parts.context;
    let page: Page<OperationRecord>;
    try {
      page = await store.listByOwner(ownerId, options);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new OperationError('INVALID_CURSOR', 'Invalid cursor', { cause: error });
      throw error;
    }
    const now = clock.now();
    return { ...page, items: page.items.filter((r) => r.expiresAt === undefined || r.expiresAt * 1000 > now) };
  }

  /** A fresh server-minted operation id (128 random bits). */
  mintToken(): string {
    return mintId();
  }
}
