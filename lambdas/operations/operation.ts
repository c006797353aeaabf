/**
 * The operation record: one long-running tool call, owned by one principal and
 * named by one token. Protocol-neutral: each dialect maps these words to its own.
 */
import type { TraceCarrier } from '../observability/trace-context.ts';

/** Lifecycle states (DESIGN §4). `canceled` and the two outcomes are terminal. */
export type OperationStatus = 'submitted' | 'working' | 'input_required' | 'completed' | 'failed' | 'canceled';

/** What an answer does to the waiting state: resume it with an output, or fail it so its Catch decides (input-protocol.ts). */
export type Delivery = { kind: 'success'; output: unknown } | { kind: 'failure'; error: string; cause: string };

export const TERMINAL_STATUSES: readonly OperationStatus[] = ['completed', 'failed', 'canceled'];

export function isTerminal(status: OperationStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * Which wire started the operation; kept so each dialect answers only for its own.
 * `handle`: a call from a client without async support, answered with an operation id
 * its model follows up through built-in tools.
 */
export type Dialect = 'sep-1391' | 'tasks-2026-07-28' | 'tasks-2025-11-25' | 'sync' | 'handle';

/** Dialects whose operations a client may cancel by the JSON-RPC id of the call that started them; task dialects cancel by task id. */
const CANCELABLE_BY_REQUEST_ID: readonly Dialect[] = ['sep-1391', 'sync', 'handle'];

/** Whether a dialect's operations may be named by request id (a start records the alias with its slot, an end releases it). */
export function cancelableByRequestId(dialect: Dialect): boolean {
  return CANCELABLE_BY_REQUEST_ID.includes(dialect);
}

/**
 * How a terminal operation ended.
 * - `result`: the execution succeeded; `output` is its JSON output.
 * - `tool-error`: the execution FAILED or TIMED_OUT (a tool failure, retrievable as `isError`).
 * - `protocol-error`: the state machine asked for a JSON-RPC error (`Mcp.ProtocolError`);
 *   `code` is the one it chose.
 * - `internal-error`: our own machinery failed (the execution vanished, the result did
 *   not fit); the edge picks the wire code.
 */
export type Outcome =
  | { kind: 'result'; output: unknown }
  /** A result too large for the record, kept in the results store (see result-store.ts). */
  | { kind: 'stored-result'; resultId: string; mimeType: string; bytes: number }
  | { kind: 'tool-error'; error: string; cause?: string }
  | { kind: 'protocol-error'; code: number; message: string; data?: unknown }
  /** `failedStart`: StartExecution failed and no execution of the record's name exists (see starts.ts). */
  | { kind: 'internal-error'; message: string; failedStart?: true }
  /**
   * The answer a client reads, checked and shaped once, when the operation completed, against
   * the tool its execution ran (see `ResultShaper`): served as stored, whatever is deployed later.
   */
  | { kind: 'call-tool-result'; result: Record<string, unknown> };

/** What a finished result is checked against: the tool as its execution was started. */
export interface ResultContract {
  outputSchema?: Record<string, unknown>;
}

/** Identifies a record: the owner (a hash of the principal) and the token. */
export interface OperationKey {
  readonly ownerId: string;
  readonly token: string;
}

export interface OperationRecord extends OperationKey {
  tool: string;
  /** sha256 of the canonical JSON of the arguments: the idempotency fingerprint. */
  argumentsHash: string;
  dialect: Dialect;
  status: OperationStatus;
  statusMessage?: string;
  /** Step Functions execution name, fixed when the record is created. */
  executionName: string;
  executionArn?: string;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  completedAt?: number;
  /** Seconds the result is kept after completion; `null` = unlimited. */
  keepAliveSeconds: number | null;
  pollIntervalSeconds: number;
  /**
   * Epoch seconds after which the record is expired (the table's TTL attribute). While
   * running: creation + the tool's longest run + keepAlive; once terminal: completion +
   * keepAlive. Absent only for an unlimited keepAlive, which the operator must allow.
   */
  expiresAt?: number;
  outcome?: Outcome;
  /**
   * The tool's result contract when the operation started: its result is checked against this
   * at completion, not against a later deploy. Absent on records written before results were.
   */
  resultContract?: ResultContract;
  /** Typed id of the JSON-RPC request that started it (opaque; the edge encodes its JSON type), for `notifications/cancelled`. */
  requestId?: string;
  /** What the client that started it declared it can answer (see input-protocol.ts). */
  inputKinds?: InputKind[];
  /** Questions the execution waits on, by key; the status is `input_required` while any is pending. */
  pendingInputs?: Record<string, PendingInput>;
  /** Every key ever asked: a key names one question over the operation's whole life. */
  usedInputKeys?: string[];
  /** Questions that closed (answered, or their states stopped waiting without it), by key, so a late answer is told so. */
  closedInputs?: Record<string, ClosedInput>;
  /** Progress and log lines the execution reported, oldest first: the most recent few (see run-reports.ts). */
  reports?: RunReport[];
  /** The start's span context (W3C), when tracing was on: the execution, status sync and the notices join its trace. */
  trace?: TraceCarrier;
}

/** Log levels (RFC 5424 severities, as MCP logging names them), least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One report an execution made while it ran, numbered from 1 over the operation's life. */
export type RunReport = { seq: number; at: number } & (
  | { kind: 'progress'; progress: number; total?: number; message?: string }
  | { kind: 'log'; level: LogLevel; logger?: string; data: unknown }
);

/** A kind of question a client may declare it can answer; opaque to the core (see input-protocol.ts). */
export type InputKind = string;

/** A question as a state machine asked it (a server-to-client request); opaque to the core, read by the `InputProtocol`. */
export interface InputRequestMessage {
  method: string;
  params: Record<string, unknown>;
}

/** A question an execution waits on at a `.waitForTaskToken` state. */
export interface PendingInput {
  request: InputRequestMessage;
  /** The waiting state's task token: the server's secret, never shown to a client. */
  taskToken: string;
  /** Epoch milliseconds. */
  askedAt: number;
  /** Set while one answer is being delivered (epoch ms), so a second answer is ignored. */
  answeringSince?: number;
  /**
   * When the waiting state times out (epoch ms; its TimeoutSeconds or HeartbeatSeconds from
   * when it was entered). Step Functions reports no event for it, so the question is closed
   * by this time alone. Absent: the state waits as long as its execution.
   */
  deadline?: number;
  /** Whether other states of the execution may run beside the asking one (a Parallel branch, a Map). */
  concurrent?: boolean;
  /** The asking state's name, so a retried attempt of that state finds the question its failed attempt stored. */
  state?: string;
  /**
   * When the asking state was entered (epoch ms, its `$$.State.EnteredTime`, which a retry
   * keeps), so a retried attempt in a Parallel branch or a Map iteration finds its own question.
   */
  enteredAt?: number;
  /**
   * An answer that reached this question's task token after its state had stopped waiting,
   * while the operation ran on: kept for the retried attempt of the state (a failed ask is
   * retried under a new token), which takes the question over and is resumed with it.
   */
  keptAnswer?: Delivery;
}

/**
 * How a question closed: answered (`answered`, from when its answer is being delivered), its
 * state timed out (`timed-out`), or it stopped waiting some other way (`ended`: its execution
 * went on past it, or ended).
 */
export interface ClosedInput {
  reason: 'answered' | 'timed-out' | 'ended';
  /** Epoch milliseconds. */
  at: number;
}

/** Fields a status transition may change. */
export type OperationChanges = Partial<
  Pick<
    OperationRecord,
    | 'status'
    | 'statusMessage'
    | 'executionArn'
    | 'updatedAt'
    | 'completedAt'
    | 'expiresAt'
    | 'outcome'
    | 'pendingInputs'
    | 'usedInputKeys'
    | 'closedInputs'
    | 'reports'
  >
>;
