/**
 * The ports the operations core depends on. Adapters live in `lambdas/aws/`
 * (DynamoDB, Step Functions) and in-memory versions beside this file for unit tests.
 */
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus, Outcome, ResultContract } from './operation.ts';

export type CreateResult = { created: true; record: OperationRecord } | { created: false; existing: OperationRecord };

export interface Page<T> {
  items: T[];
  /** Opaque; absent on the last page. */
  nextCursor?: string;
}

/** A listing cursor the store did not issue for this owner; the edge answers -32602. */
export class InvalidCursorError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Invalid cursor', options);
    this.name = 'InvalidCursorError';
  }
}

/** A record larger than the store's item size limit; nothing was written. */
export class RecordTooLargeError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Operation record exceeds the item size limit', options);
    this.name = 'RecordTooLargeError';
  }
}

/** A request alias: which token a JSON-RPC request id started, and until when that matters. */
export interface RequestAlias {
  token: string;
  /** Epoch seconds; the alias means nothing after it (the store may still hold it). */
  expiresAt: number;
}

/**
 * What a slot claim does to a request id's alias in the same write (see `claimActiveSlot`):
 * records it for the token (`expiresAt`, epoch seconds, as `RequestAlias.expiresAt`), or,
 * for a call that cannot be cancelled by id, forgets what an earlier call kept under it.
 */
export type SlotAlias = { requestId: string; expiresAt: number; forget?: never } | { requestId: string; forget: true };

/**
 * Request aliases kept per operation: its newest request ids. A client that retries a call
 * under new JSON-RPC ids (SEP-1391) cancels by a recent one; older ids are forgotten, so
 * retries never grow the owner's slot item.
 */
export const MAX_REQUEST_ALIASES_PER_OPERATION = 4;

/** Whether a start may take an active-operation slot. */
export type SlotClaim = 'claimed' | 'already-held' | 'refused';

/**
 * The longest token or request id, in UTF-8 bytes, that the core lets reach a store: every
 * store accepts ids this long in its keys, and the core refuses longer ones before a store
 * sees them. It leaves room for a key's prefix; the tightest key today, the DynamoDB owner
 * index's sort key, holds 1,024 bytes with a 16-byte time prefix.
 */
export const MAX_ID_BYTES = 1000;

/**
 * The operation records, and the small items looked up beside them (execution pointers, log
 * levels): each its own item, written whole or conditionally, never scanned.
 */
export interface OperationRecordStore {
  /** Conditional put (`attribute_not_exists`): never overwrites an existing token. */
  create(record: OperationRecord): Promise<CreateResult>;
  /** Strongly consistent read; `undefined` when absent. Expiry is the caller's concern. */
  get(key: OperationKey): Promise<OperationRecord | undefined>;
  /**
   * Conditional update: applies `changes` only while the current status is one of `from`
   * (and, with `ifUpdatedAt`, while `updatedAt` still has that value: a compare-and-set
   * that lets exactly one of many pollers reconcile a stale record).
   * Returns the updated record, or `undefined` when the condition failed or the record is absent.
   */
  transition(
    key: OperationKey,
    from: readonly OperationStatus[],
    changes: OperationChanges,
    options?: { ifUpdatedAt?: number },
  ): Promise<OperationRecord | undefined>;
  /**
   * Deletes a record while its status is one of `from` (a start refused after its record
   * was written takes the record back). True when it was deleted.
   */
  discard(key: OperationKey, from: readonly OperationStatus[]): Promise<boolean>;
  /** The owner's records, newest first (served by the owner+time index, never a scan). */
  listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>>;
  /**
   * Remembers which operation an execution runs, for executions whose input does not
   * carry it (tools that pass the machine only its arguments). Execution names are
   * unique, so the pointer is keyed by the name alone.
   */
  putExecutionPointer(executionName: string, key: OperationKey, expiresAt: number): Promise<void>;
  /** The operation an execution runs, as `putExecutionPointer` left it; expiry is the caller's concern. */
  findExecutionPointer(executionName: string): Promise<(OperationKey & { expiresAt: number }) | undefined>;
  /**
   * The log level an owner asked for with `logging/setLevel` (the server keeps no session,
   * so it is the principal's, until `expiresAt`, epoch seconds). Last writer wins.
   */
  putLogLevel(ownerId: string, level: string, expiresAt: number): Promise<void>;
  /** The owner's log level as `putLogLevel` left it; expiry is the caller's concern. */
  findLogLevel(ownerId: string): Promise<{ level: string; expiresAt: number } | undefined>;
}

/**
 * The per-owner side item: the owner's active-operation slots, and the request aliases of
 * the operations holding them. One item per owner, so a claim is one conditional write;
 * it goes once the owner holds no slot, and its aliases with it.
 */
export interface ActiveSlotStore {
  /**
   * Takes one of the owner's `limit` active-operation slots for `token`, atomically
   * (one conditional update of a per-owner item; no scan, no transaction). Idempotent
   * per token: a token that holds a slot gets `already-held`, never a second slot.
   * `alias` records the request alias of the token, or forgets the id's alias, in the same
   * write (unless refused).
   */
  claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim>;
  /**
   * Gives the token's slot back; idempotent. With `requestId`, its alias goes too if it
   * still names the token. Once the owner holds no slot, its aliases go with the slots.
   */
  releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void>;
  /** The tokens holding the owner's slots (for repairing slots a crash never released). */
  listActiveSlots(ownerId: string): Promise<string[]>;
  /**
   * Remembers which token a JSON-RPC request id started, for `notifications/cancelled`.
   * Aliases are kept with the owner's active slots and only while `alias.token` holds one
   * (an operation that is over has nothing to cancel); otherwise this does nothing.
   * Last writer wins: the newest request with an id is the one a cancel names. A token keeps
   * its newest {@link MAX_REQUEST_ALIASES_PER_OPERATION} ids; an older one is forgotten.
   * `requestId` arrives typed by the edge (7 and "7" are two ids), opaque here.
   */
  putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void>;
  /** Forgets a request id: a later call that cannot be cancelled reused it. Absent is fine, and costs no write. */
  deleteRequestAlias(ownerId: string, requestId: string): Promise<void>;
  findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined>;
}

/** The whole store the core runs on: both halves, which one adapter serves from one table. */
export interface RecordStore extends OperationRecordStore, ActiveSlotStore {}

/** Step Functions execution states, as the service names them. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

export interface ExecutionSnapshot {
  executionArn: string;
  status: ExecutionStatus;
  /** Parsed JSON output, when SUCCEEDED. */
  output?: unknown;
  error?: string;
  cause?: string;
  startDate?: Date;
  stopDate?: Date;
  /** Parsed execution input, when the engine returns it. */
  input?: unknown;
}

/** Thrown by engines when an execution ARN names nothing. */
export class ExecutionNotFoundError extends Error {
  constructor(executionArn: string, options?: { cause?: unknown }) {
    super(`Execution not found: ${executionArn}`, options);
    this.name = 'ExecutionNotFoundError';
  }
}

/**
 * A task token that names no waiting task any more: answered already, timed out (heartbeat or
 * TimeoutSeconds), its execution closed, or never issued. Nothing can resume it.
 */
export class TaskGoneError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The task this token names is no longer waiting', options);
    this.name = 'TaskGoneError';
  }
}

export interface StartExecutionInput {
  stateMachineArn: string;
  /** Deterministic: starting the same name with the same input twice starts one execution. */
  name: string;
  input: unknown;
}

export interface WorkflowEngine {
  /**
   * The ARN an execution of `stateMachineArn` named `name` has (or will have): it is
   * derivable, so a record can stop or describe its execution before StartExecution answers.
   */
  executionArnFor(stateMachineArn: string, name: string): string;
  /** Idempotent for the same name and input (Step Functions' own guarantee for STANDARD). */
  start(input: StartExecutionInput): Promise<{ executionArn: string }>;
  /** EXPRESS only: runs to completion (at most 5 minutes) and returns the final snapshot; `signal` gives up waiting. */
  startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot>;
  describe(executionArn: string): Promise<ExecutionSnapshot>;
  /**
   * Stops a running execution; stopping a finished one is not an error (and changes
   * nothing). Throws ExecutionNotFoundError for an execution that never started.
   */
  stop(executionArn: string, reason: { error: string; cause: string }): Promise<void>;
  /** Resumes a `.waitForTaskToken` state with `output`; TaskGoneError when it no longer waits. */
  sendTaskSuccess(taskToken: string, output: unknown): Promise<void>;
  /** Fails a `.waitForTaskToken` state (its Catch sees `error`); TaskGoneError when it no longer waits. */
  sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void>;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The tool a finished result is shaped for: its name, and its contract as the execution ran it. */
export interface ShapedTool extends ResultContract {
  name: string;
}

/**
 * Checks and shapes a finished execution's outcome into what a client will read, once, at
 * completion (the protocol edge's rules, wired in by the app). A `result` or `stored-result`
 * becomes a `call-tool-result`, or an `internal-error` when the output breaks the tool's
 * contract; other outcomes come back unchanged.
 */
export type ResultShaper = (outcome: Outcome, tool: ShapedTool) => Outcome;

/**
 * The logger every layer writes through. Callers pass ids and error names, never tool
 * arguments, results or secrets. The implementation (Powertools JSON lines with the request
 * context) is in observability/structured-logger.ts.
 */
export interface Logger {
  error(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
  info?(message: string, fields: Record<string, unknown>): void;
  debug?(message: string, fields: Record<string, unknown>): void;
}
