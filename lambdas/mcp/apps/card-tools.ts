/**
 * What the operation card's app-only tools do (see card-tool-schemas.ts): read one
 * operation as the card shows it, answer its question, cancel it. The operation is the
 * caller's own, in whichever dialect it started: records are keyed by principal and token,
 * so another principal's id reads as not found, like an unknown one.
 */
import * as z from 'zod';
import { isTerminal, type LogLevel, LOG_LEVELS, type OperationKey, type OperationRecord, type RunReport } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import { finalResponse, parseParams } from '../dialects/dialect-support.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { requestKeyOf, type RequestView } from '../edge/request-view.ts';
import type { CallToolResultShape } from '../results/tool-result.ts';
import { CARD_ANSWER, CARD_CANCEL, CARD_STATUS, CARD_TOOL_NAMES, type CardStatus } from './card-tool-schemas.ts';

export { CARD_TOOL_NAMES };

const OperationId = z.string({ message: 'operationId must be a string' }).min(1, 'operationId must not be empty');
const StatusArguments = z
  .strictObject({
    operationId: OperationId.optional(),
    requestId: z.union([z.string(), z.number().int()], { message: 'requestId must be a string or an integer' }).optional(),
    tool: z.string({ message: 'tool must be a string' }).optional(),
  })
  .refine((args) => (args.operationId === undefined) !== (args.requestId === undefined), 'needs exactly one of operationId and requestId');
const AnswerArguments = z.strictObject({
  operationId: OperationId,
  key: z.string({ message: 'key must be a string' }).min(1, 'key must not be empty'),
  action: z.enum(['accept', 'decline', 'cancel'], { message: 'action must be accept, decline or cancel' }),
  content: z.record(z.string(), z.unknown(), { message: 'content must be an object' }).optional(),
});
const CancelArguments = z.strictObject({ operationId: OperationId });

/** The least severe log line the card shows: debug lines are for developers. */
const SHOWN_LOG_LEVEL: LogLevel = 'info';
/** Characters of a log line's data the card gets. */
const MAX_LOG_TEXT = 500;

/** A question the card can show: an elicitation form. */
export interface CardQuestion {
  key: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}

/** One operation as the card shows it: `structuredContent` of every card tool. */
export interface CardSnapshot {
  operationId: string;
  tool: string;
  title?: string;
  status: CardStatus;
  statusMessage?: string;
  progress?: { progress: number; total?: number; message?: string };
  log?: { level: LogLevel; text: string };
  /** Seconds since the call was made, up to now or to its end. */
  elapsedSeconds: number;
  pollAfterSeconds: number;
  question?: CardQuestion;
  /** Once it ended (not canceled): what the tool answered. */
  result?: CallToolResultShape;
  /** Once it ended in a JSON-RPC error of its own choosing. */
  error?: { code: number; message: string };
  /** After an answer: whether it reached the run (`delivered`), came too late (`closed`) or was a repeat (`ignored`). */
  answer?: 'delivered' | 'closed' | 'ignored';
}

/** Whether `name` is one of the card's tools. */
export function isCardTool(name: string): boolean {
  return CARD_TOOL_NAMES.includes(name);
}

/** Answers a call of one of the card's tools. */
export async function callCardTool(name: string, args: unknown, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  try {
    switch (name) {
      case CARD_STATUS:
        return await cardStatus(parseParams(StatusArguments, args, 'arguments'), view, deps);
      case CARD_ANSWER:
        return await cardAnswer(parseParams(AnswerArguments, args, 'arguments'), view, deps);
      case CARD_CANCEL:
        return await cardCancel(parseParams(CancelArguments, args, 'arguments'), view, deps);
      default:
        throw new Error(`Not an operation card tool: ${name}`);
    }
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) return missing(error.code);
    throw error;
  }
}

async function cardStatus(args: z.infer<typeof StatusArguments>, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  const key = args.operationId === undefined ? await keyOfRequest(args.requestId, view, deps) : keyOf(view, args.operationId);
  const record = await deps.operations.readCurrent(key);
  // A request id names the latest cancelable call with it: another tool's call is not this card's.
  if (args.tool !== undefined && record.tool !== args.tool) throw new OperationError('NOT_FOUND', 'Operation not found');
  return snapshotResult(record, deps);
}

async function cardAnswer(args: z.infer<typeof AnswerArguments>, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  const key = keyOf(view, args.operationId);
  await deps.operations.readLive(key);
  const response = { action: args.action, ...(args.action === 'accept' && args.content ? { content: args.content } : {}) };
  const outcome = await deps.operations.inputs.answer(key, { [args.key]: { result: response } });
  const answer = outcome.resumed.length > 0 ? 'delivered' : outcome.closed.length > 0 ? 'closed' : 'ignored';
  return snapshotResult(await deps.operations.readCurrent(key), deps, answer);
}

async function cardCancel(args: z.infer<typeof CancelArguments>, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  const key = keyOf(view, args.operationId);
  const before = await deps.operations.readCurrent(key);
  // The core keeps the real outcome of a run that finished before the stop took effect.
  const after = isTerminal(before.status) ? before : await deps.operations.cancel(key, 'Canceled from the operation card');
  return snapshotResult(after, deps);
}

function keyOf(view: RequestView, operationId: string): OperationKey {
  return { ownerId: view.ownerId, token: operationId };
}

async function keyOfRequest(requestId: string | number | undefined, view: RequestView, deps: McpDeps): Promise<OperationKey> {
  const requestKey = requestKeyOf(requestId);
  const key = requestKey === undefined ? undefined : await deps.operations.findByRequestId(view.ownerId, requestKey);
  if (!key) throw new OperationError('NOT_FOUND', 'Operation not found');
  return key;
}

function snapshotResult(record: OperationRecord, deps: McpDeps, answer?: CardSnapshot['answer']): CallToolResultShape {
  const snapshot = { ...cardSnapshot(record, deps), ...(answer ? { answer } : {}) };
  const text = `${snapshot.title ?? snapshot.tool}: ${snapshot.status}${snapshot.statusMessage ? ` (${snapshot.statusMessage})` : ''}`;
  return { content: [{ type: 'text', text }], structuredContent: snapshot as unknown as Record<string, unknown> };
}

/** The record as the card shows it. */
export function cardSnapshot(record: OperationRecord, deps: McpDeps, now = Date.now()): CardSnapshot {
  const question = questionOf(record, deps);
  const status: CardStatus = record.status === 'submitted' || (record.status === 'input_required' && !question) ? 'working' : record.status;
  const title = deps.catalog.get(record.tool)?.title;
  const progress = latest(record.reports, 'progress');
  // An increment may leave the total out: the last one reported still holds.
  const total =
    progress?.total ?? record.reports?.findLast((r): r is Extract<RunReport, { kind: 'progress' }> => r.kind === 'progress' && r.total !== undefined)?.total;
  const log = latestShownLog(record.reports);
  const final = isTerminal(record.status) ? finalResponse(record, deps) : undefined;
  return {
    operationId: record.token,
    tool: record.tool,
    ...(title === undefined ? {} : { title }),
    status,
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    ...(progress
      ? {
          progress: {
            progress: progress.progress,
            ...(total === undefined ? {} : { total }),
            ...(progress.message === undefined ? {} : { message: progress.message }),
          },
        }
      : {}),
    ...(log ? { log } : {}),
    elapsedSeconds: Math.max(0, ((record.completedAt ?? now) - record.createdAt) / 1000),
    pollAfterSeconds: record.pollIntervalSeconds,
    ...(question ? { question } : {}),
    ...(final && 'result' in final ? { result: final.result } : {}),
    ...(final && 'error' in final ? { error: { code: final.error.code, message: final.error.message } } : {}),
  };
}

/** The first open question the card can show: an elicitation in form mode. */
function questionOf(record: OperationRecord, deps: McpDeps): CardQuestion | undefined {
  for (const [key, request] of Object.entries(deps.operations.inputs.pending(record))) {
    const { params } = request;
    if (request.method !== 'elicitation/create' || params.mode === 'url') continue;
    const schema = params.requestedSchema;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) continue;
    return { key, message: typeof params.message === 'string' ? params.message : '', requestedSchema: schema as Record<string, unknown> };
  }
  return undefined;
}

function latest<K extends RunReport['kind']>(reports: RunReport[] | undefined, kind: K): Extract<RunReport, { kind: K }> | undefined {
  return reports?.findLast((report): report is Extract<RunReport, { kind: K }> => report.kind === kind);
}

function latestShownLog(reports: RunReport[] | undefined): CardSnapshot['log'] {
  const shown = LOG_LEVELS.indexOf(SHOWN_LOG_LEVEL);
  const line = reports?.findLast((report): report is Extract<RunReport, { kind: 'log' }> => report.kind === 'log' && LOG_LEVELS.indexOf(report.level) >= shown);
  if (!line) return undefined;
  const text = typeof line.data === 'string' ? line.data : JSON.stringify(line.data);
  return { level: line.level, text: text.length > MAX_LOG_TEXT ? `${text.slice(0, MAX_LOG_TEXT - 1)}…` : text };
}

/** The id is not echoed: it may be anything up to the body limit. */
function missing(code: 'NOT_FOUND' | 'EXPIRED'): CallToolResultShape {
  const text = code === 'EXPIRED' ? 'That operation has expired: its result is no longer kept.' : 'No operation of yours has that id.';
  return { content: [{ type: 'text', text }], isError: true };
}
