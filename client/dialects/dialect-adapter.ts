/** The shape every client-side dialect file has: start, status, result, cancel, questions and answers, over one connection. */
import * as z from 'zod';
import { decodeBase64UrlJson, isObject } from '../../lambdas/shared/json-values.ts';
import type { CallProgress, CallState, CallToolResult } from '../call-handle.ts';
import type { McpConnection, NotificationListener, RequestListener, ServerRequest } from '../mcp-connection.ts';
import type { Answer, Question } from '../questions.ts';

/** An open question as a dialect read it: the question, and the server request to answer when the dialect answers by request id. */
export interface AskedQuestion {
  question: Question;
  /** The id of the server-to-client request that asked it (SEP-1391, 2025-11-25). */
  requestId?: string | number;
}

/** A dialect's view of a running call, in the shared vocabulary. */
export interface RemoteStatus {
  state: CallState;
  statusMessage?: string;
  pollIntervalMs?: number;
  progress?: CallProgress;
  error?: string;
  /** The open questions, when the status answer carried them (the Tasks extension, SEP-1391). */
  questions?: AskedQuestion[];
  /** A result or error the status answer already carried (the Tasks extension inlines it). */
  inline?: { result: CallToolResult } | { error: { code: number; message: string; data?: unknown } };
}

export type StartOutcome = { kind: 'async'; remoteId: string; status: RemoteStatus } | { kind: 'sync'; result: CallToolResult };

export interface StartOptions {
  /** The JSON-RPC id of the `tools/call` (a synchronous call's, to cancel it by). */
  id?: string;
  keepAliveSeconds?: number;
  /** Asks the server for `notifications/progress` on the call's stream. */
  progressToken?: string;
  signal?: AbortSignal;
  onNotification?: NotificationListener;
  /** Server-to-client requests on the call's own stream (questions a synchronous call asks). */
  onRequest?: RequestListener;
  /** Answers a question a 2026-07-28 call asks before it returns (its `input_required` rounds). */
  answerQuestion?: (asked: AskedQuestion) => Promise<Answer>;
}

/** Rounds of questions one 2026-07-28 call may take before the client gives up. */
const MAX_INPUT_ROUNDS = 20;

/**
 * A 2026-07-28 `tools/call` through its rounds of questions: an answer with `resultType:
 * "input_required"` carries `inputRequests` and a `requestState`, and the same call is sent
 * again with `inputResponses` keyed as they were and the `requestState` echoed exactly,
 * until it answers otherwise (SEP-2322, multi round-trip requests).
 */
export async function modernToolCall(connection: McpConnection, params: Record<string, unknown>, options: StartOptions): Promise<Record<string, unknown>> {
  let retry: Record<string, unknown> = {};
  for (let round = 0; ; round++) {
    const answer = await connection.modern('tools/call', { ...params, ...retry }, options);
    if (answer.resultType !== 'input_required') return answer;
    const rounds = parseAnswer(InputRound, answer, 'tools/call');
    if (!options.answerQuestion) throw new Error('The call asked a question before it returned, and nothing here answers it: pass onQuestion');
    if (round >= MAX_INPUT_ROUNDS) throw new Error(`The call asked questions for more than ${MAX_INPUT_ROUNDS} rounds`);
    const inputResponses: Record<string, Answer> = {};
    for (const [key, request] of Object.entries(rounds.inputRequests)) {
      const question = questionOf(key, request.method, request.params);
      if (!question) throw new Error(`The call asked ${request.method} ("${key}"), which this client does not answer`);
      inputResponses[key] = await options.answerQuestion({ question });
    }
    retry = { inputResponses, ...(rounds.requestState === undefined ? {} : { requestState: rounds.requestState }) };
  }
}

const InputRound = z.looseObject({
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.unknown().optional() })),
  requestState: z.string().optional(),
});

export interface DialectAdapter {
  start(connection: McpConnection, tool: string, args: Record<string, unknown>, options: StartOptions): Promise<StartOutcome>;
  status(connection: McpConnection, remoteId: string, signal?: AbortSignal): Promise<RemoteStatus>;
  /** The final result of a terminal call; throws `CallFailedError` or `CallCancelledError` when there is none. */
  result(connection: McpConnection, remoteId: string, status: RemoteStatus, signal?: AbortSignal): Promise<CallToolResult>;
  cancel(connection: McpConnection, remoteId: string, signal?: AbortSignal): Promise<void>;
  /** The call's open questions now; empty when none is open. `current`, a status just read, spares reading it again. */
  questions(connection: McpConnection, remoteId: string, signal?: AbortSignal, current?: RemoteStatus): Promise<AskedQuestion[]>;
  /** Sends `answer` to one open question. */
  answer(connection: McpConnection, remoteId: string, asked: AskedQuestion, answer: Answer, signal?: AbortSignal): Promise<void>;
}

const FormElicitation = z.looseObject({
  message: z.string(),
  mode: z.literal('form').optional(),
  requestedSchema: z.looseObject({
    type: z.literal('object'),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())),
    required: z.array(z.string()).optional(),
  }),
});

/**
 * A form-mode elicitation as a Question; `undefined` for anything this client does not answer
 * (sampling, roots, URL-mode elicitation), which it never declared it could.
 */
export function questionOf(key: string, method: unknown, params: unknown): Question | undefined {
  if (method !== 'elicitation/create') return undefined;
  const parsed = FormElicitation.safeParse(params);
  if (!parsed.success) return undefined;
  const { message, requestedSchema } = parsed.data;
  return { key, message, requestedSchema };
}

/** This server's prefix for the ids of the requests that ask questions. */
const INPUT_REQUEST_ID_PREFIX = 'asyncmcp-input:';

/**
 * A question's key from the id of the request that asked it: stable across polls, since the
 * server repeats a question with the same id. Ids of this server name the question's own key
 * (base64url JSON `{ k }` after its prefix); any other server's id is the key as it is.
 */
export function keyOfRequest(request: ServerRequest): string {
  const { id } = request;
  if (typeof id === 'string' && id.startsWith(INPUT_REQUEST_ID_PREFIX)) {
    const decoded = decodeBase64UrlJson(id.slice(INPUT_REQUEST_ID_PREFIX.length));
    if (isObject(decoded) && typeof decoded.k === 'string' && decoded.k !== '') return decoded.k;
  }
  return String(id);
}

/** The questions among server-to-client requests, each with the id to answer it by. */
export function askedIn(requests: ServerRequest[]): AskedQuestion[] {
  const asked: AskedQuestion[] = [];
  for (const request of requests) {
    const question = questionOf(keyOfRequest(request), request.method, request.params);
    if (question) asked.push({ question, requestId: request.id });
  }
  return asked;
}

/** A wire `CallToolResult`; extra fields (`_meta`, `resultType`) pass. */
export const CallToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

export const JsonRpcErrorSchema = z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() });

/** Parses a wire answer, naming the method when a server sends something else. */
export function parseAnswer<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`Unexpected ${what} answer: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** `notifications/progress` params as the shared progress shape. */
export function progressOf(params: Record<string, unknown>): CallProgress | undefined {
  if (typeof params.progress !== 'number') return undefined;
  return {
    progress: params.progress,
    ...(typeof params.total === 'number' ? { total: params.total } : {}),
    ...(typeof params.message === 'string' ? { message: params.message } : {}),
  };
}

/** The `_meta.progressToken` of a `tools/call`, when the caller listens for progress. */
export function progressMeta(options: StartOptions): { _meta?: { progressToken: string } } {
  return options.progressToken === undefined ? {} : { _meta: { progressToken: options.progressToken } };
}
