/** The handle of a started tool call and the status shapes every dialect maps to. */
import type { Answer, Question } from './questions.ts';

/** How a call runs: one of the three async dialects, or a plain synchronous call. */
export type Dialect = 'tasks' | 'tasks-2025-11-25' | 'sep-1391' | 'sync';

/** The async dialects, best first: the order `startToolCall` tries them in. */
export const ASYNC_DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const satisfies readonly Dialect[];

/**
 * A started call, serialisable as JSON: enough to join, poll or cancel it from any process.
 * It never holds a secret; `auth` only says which kind of credentials the server saw.
 */
export interface CallHandle {
  /** Ours: a random id, also the key in the state store. */
  id: string;
  url: string;
  dialect: Dialect;
  tool: string;
  /** ISO 8601. */
  createdAt: string;
  /** The server's name for the call: the task id, or the SEP-1391 operation token. */
  remoteId?: string;
  /** The `Mcp-Session-Id` a stateful server bound the call to. */
  sessionId?: string;
  /** The protocol revision the call was started with (initialize-based servers). */
  protocolVersion?: string;
  auth?: 'bearer' | 'sigv4';
  /** The call declared it can answer questions (elicitation), so every later request declares it too. */
  canAnswer?: boolean;
}

/** One status vocabulary for every dialect. */
export type CallState = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'unknown';

/** A progress report (`notifications/progress`). */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What `status` answers and `onStatus` reports. */
export interface CallStatus {
  id: string;
  state: CallState;
  statusMessage?: string;
  /** The server's suggested poll interval. */
  pollIntervalMs?: number;
  progress?: CallProgress;
  /** A protocol failure's message, or SEP-1391's `error`. */
  error?: string;
  /** The open questions, filled by `status()` while the state is `input_required`. */
  questions?: Question[];
}

/** A `CallToolResult` as it came off the wire. */
export interface CallToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What the state store keeps per call: the handle, its last known status and, once known, its result. */
export interface StoredCall {
  handle: CallHandle;
  lastStatus?: CallStatus;
  result?: CallToolResult;
}

export function isTerminal(state: CallState): boolean {
  return state === 'completed' || state === 'failed' || state === 'cancelled' || state === 'unknown';
}

/** The call ended in a protocol error (or SEP-1391 `unknown`): there is no `CallToolResult`. */
export class CallFailedError extends Error {
  readonly code: number | undefined;
  readonly data: unknown;
  constructor(message: string, details: { code?: number; data?: unknown } = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CallFailedError';
    this.code = details.code;
    this.data = details.data;
  }
}

/** The call was cancelled before it produced a result. */
export class CallCancelledError extends Error {
  constructor(message = 'The call was cancelled', options?: ErrorOptions) {
    super(message, options);
    this.name = 'CallCancelledError';
  }
}

/** Answers one question; `context.handle` is the call that asks it. (Beside the handle it names, so questions.ts imports no handle.) */
export type QuestionHandler = (question: Question, context: { handle: CallHandle; signal?: AbortSignal }) => Answer | Promise<Answer>;
