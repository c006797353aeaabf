/**
 * Handle tools, for clients that declare no async support (on by default): a long-running
 * tool call runs up to its sync bound and then answers with an operation id, and four
 * built-in tools let the model check on it, wait for its result, cancel it and list its
 * operations. Such operations are core
 * records of the `handle` dialect, owned by the caller's principal like any other.
 *
 * SEP-1391 says "SDKs MUST NOT show LRO-only tools ... to clients on old protocol
 * versions"; these show them with a contract a model can follow instead, since hosts
 * without tasks support (Claude Code's print mode among them) would otherwise lack them.
 * `ASYNC_MCP_HANDLE_TOOLS=0` turns them off.
 */
import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { isTerminal, type OperationKey, type OperationRecord } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { SyncStep, SyncStepInput } from '../../operations/operations-service.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import { boundedCursor, finalResponse, parseParams, readOwnRecord } from '../dialects/dialect-support.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { MAX_WAIT_SECONDS, OPERATION_CANCEL, OPERATION_LIST, OPERATION_RESULT, OPERATION_STATUS, type HandleStatus } from './handle-tool-schemas.ts';
import { continueRetry, inputRequiredResult, requestDeadline, roundOf, type RoundCall } from '../input/input-responses.ts';
import { modernRound } from './modern-sync-call.ts';
import type { RequestView } from '../edge/request-view.ts';
import { callNotifications } from './legacy-sync-call.ts';
import { ServerRequests } from '../input/server-requests.ts';
import { toCallToolResult, type CallToolResultShape } from '../results/tool-result.ts';

export { BUILT_IN_LISTINGS, BUILT_IN_TOOL_NAMES, handleListing, MAX_WAIT_SECONDS } from './handle-tool-schemas.ts';

const DIALECT = 'handle';
/** Operations per `operation_list` page. */
export const LIST_PAGE_SIZE = 50;
/** Store pages read at most to fill one `operation_list` page with handle operations. */
const MAX_STORE_PAGES = 5;

const OperationId = z.string({ message: 'operationId must be a string' }).min(1, 'operationId must not be empty');
const IdArguments = z.strictObject({ operationId: OperationId });
const ResultArguments = z.strictObject({
  operationId: OperationId,
  waitSeconds: z
    .number({ message: 'waitSeconds must be a number of seconds' })
    .min(0, 'waitSeconds must not be negative')
    .max(MAX_WAIT_SECONDS, `waitSeconds must be at most ${MAX_WAIT_SECONDS}`)
    .optional(),
});
const ListArguments = z.strictObject({ cursor: z.string({ message: 'cursor must be a string' }).optional() });

function handleStatus(record: OperationRecord): HandleStatus {
  return record.status === 'submitted' ? 'working' : record.status;
}

/** What to call next, for the model that reads the answer. */
function nextStep(record: OperationRecord): string {
  const id = JSON.stringify(record.token);
  switch (handleStatus(record)) {
    case 'input_required':
      return (
        `${record.tool} is waiting for an answer to a question (operation ${id}). Call operation_result with operationId ${id} ` +
        `and waitSeconds up to ${MAX_WAIT_SECONDS}: the question comes to the user with it, and the result once it is answered. operation_cancel stops it.`
      );
    case 'working':
      return (
        `${record.tool} is still running as operation ${id}. Call operation_result with operationId ${id} and waitSeconds ` +
        `up to ${MAX_WAIT_SECONDS} to wait for its result, or operation_status in about ${record.pollIntervalSeconds} s to check on it. ` +
        'operation_cancel stops it.'
      );
    case 'completed':
    case 'failed':
      return `${record.tool} has finished (${handleStatus(record)}). Call operation_result with operationId ${id} to read its result.`;
    case 'canceled':
      return `${record.tool} was canceled: operation ${id} has no result.`;
  }
}

/** A handle answer: the instruction and its JSON as text, and the same fields as `structuredContent`. */
function handleResult(structured: Record<string, unknown>, instruction: string, isError = false): CallToolResultShape {
  return {
    content: [
      { type: 'text', text: instruction },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  };
}

function statusFields(record: OperationRecord): Record<string, unknown> {
  return {
    operationId: record.token,
    status: handleStatus(record),
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    pollAfterSeconds: record.pollIntervalSeconds,
  };
}

/** What calling a long-running tool answers: the handle and what to call next. */
function started(record: OperationRecord, lead: string): CallToolResultShape {
  const handle = { operationId: record.token, status: handleStatus(record), pollAfterSeconds: record.pollIntervalSeconds };
  return handleResult(handle, `${lead} ${nextStep(record)}`);
}

/**
 * A `tools/call` of an async or hybrid tool from a client without async support: it runs
 * up to its sync bound, then is handed off (an answer with the operation id) instead of
 * stopped. The run asks its questions with the capabilities this call declared, and they
 * go back the way the request's era carries answers: a 2026-07-28 call answers
 * `input_required` (SEP-2322) and its retry goes on with the same operation; an
 * initialize-era call sends them on its own SSE stream and waits on. EXPRESS tools
 * cannot be handed off.
 */
export async function callWithHandle(
  tool: ToolSpec,
  args: Record<string, unknown>,
  view: RequestView,
  ctx: ServerContext,
  deps: McpDeps,
  server: Server,
): Promise<Record<string, unknown>> {
  // Taken first: delivering a retry's answers counts against the same bound.
  const deadline = requestDeadline({ tool }, deps);
  const call: RoundCall = { tool, arguments: args, view, dialect: DIALECT };
  const round: SyncStepInput = { ...roundOf(call), atBound: 'hand-off', onQuestion: 'wait', deadline };
  let step: SyncStep;
  if (view.era === 'modern') {
    step = await modernRound(call, { ...round, onQuestion: 'return' }, ctx, deps);
  } else {
    const stream = new ServerRequests(server, ctx.mcpReq.id);
    // While it waits, the call shows the run's progress and log lines, as a synchronous call does.
    const notifications = callNotifications(view, ctx, deps);
    step = await deps.operations.runSyncStep({
      ...round,
      onInput: (record) => stream.send(record.token, deps.operations.inputs.pending(record)),
      onRecord: (record) => notifications.send(record),
      // A client that goes away ends the wait; its run goes on, as at the bound.
      signal: ctx.mcpReq.signal,
    });
    if (step.record) await notifications.send(step.record);
  }
  if (step.kind === 'input-required') return inputRequiredResult(step.record, call, deps);
  if (step.kind === 'finished') return toCallToolResult(step.outcome, tool);
  const boundSeconds = Math.min(tool.timing.syncTimeoutSeconds, deps.operations.limits.maxBlockingSeconds);
  return started(step.record, `${tool.name} did not finish within ${boundSeconds} seconds and continues in the background.`);
}

/**
 * A call of one of the four built-in tools. Unknown ids, other principals' ids and other
 * dialects' ids all answer the same tool error, which the model can act on.
 */
export async function callBuiltInTool(
  name: string,
  args: unknown,
  view: RequestView,
  deps: McpDeps,
  ctx: ServerContext,
  server: Server,
): Promise<Record<string, unknown>> {
  try {
    switch (name) {
      case OPERATION_STATUS:
        return await operationStatus(parseParams(IdArguments, args, 'arguments'), view, deps);
      case OPERATION_RESULT:
        return await operationResult(parseParams(ResultArguments, args, 'arguments'), view, deps, ctx, server);
      case OPERATION_CANCEL:
        return await operationCancel(parseParams(IdArguments, args, 'arguments'), view, deps);
      case OPERATION_LIST:
        return await operationList(parseParams(ListArguments, args, 'arguments'), view, deps);
      default:
        throw new Error(`Not a built-in tool: ${name}`);
    }
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) return missing(error.code);
    throw error;
  }
}

/** The id is not echoed: it may be anything up to the body limit. */
function missing(code: 'NOT_FOUND' | 'EXPIRED'): CallToolResultShape {
  const text =
    code === 'EXPIRED'
      ? 'That operation has expired: its result is no longer kept. Call the tool again to start a new operation.'
      : 'No operation with that operationId exists. Check the id, or call operation_list to see your operations.';
  return { content: [{ type: 'text', text }], isError: true };
}

function keyOf(view: RequestView, operationId: string): OperationKey {
  return { ownerId: view.ownerId, token: operationId };
}

/** A handle operation of this principal; anything else reads as not found (ids are bounded there). */
function readHandle(deps: McpDeps, key: OperationKey): Promise<OperationRecord> {
  return readOwnRecord(deps, key, DIALECT, 'Operation');
}

async function operationStatus(args: { operationId: string }, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  const record = await readHandle(deps, keyOf(view, args.operationId));
  return handleResult(statusFields(record), nextStep(record));
}

/**
 * The operation's result, waiting up to `waitSeconds`. Questions its run asks reach the
 * client as on the call that started it: a 2026-07-28 request answers `input_required`
 * (SEP-2322), and its retry delivers the answers and goes on waiting; an initialize-era
 * request sends them on its own stream while it waits.
 */
async function operationResult(
  args: { operationId: string; waitSeconds?: number | undefined },
  view: RequestView,
  deps: McpDeps,
  ctx: ServerContext,
  server: Server,
): Promise<Record<string, unknown>> {
  const key = keyOf(view, args.operationId);
  let record = await readHandle(deps, key);
  // Never past the server's blocking bound, which the function's timeout is sized for.
  const waitSeconds = Math.min(args.waitSeconds ?? 0, deps.operations.limits.maxBlockingSeconds);
  const deadline = Date.now() + waitSeconds * 1000;
  const call = resultCall(record, args.operationId, view, deps);
  if (view.era === 'modern' && call) {
    const retried = await continueRetry(ctx, call, deps);
    if (retried) record = await readHandle(deps, key);
  }
  const stream = view.era === 'legacy' ? new ServerRequests(server, ctx.mcpReq.id) : undefined;
  const shown = new Set<string>();
  const unshown = (r: OperationRecord) => Object.keys(deps.operations.inputs.pending(r)).some((k) => !shown.has(k));
  // A client that goes away ends the wait (never the run): nobody reads this answer then.
  const { signal } = ctx.mcpReq;
  for (;;) {
    if (signal.aborted) break;
    if (!isTerminal(record.status) && unshown(record)) {
      if (call && view.era === 'modern') return inputRequiredResult(record, call, deps);
      if (stream) {
        const pending = deps.operations.inputs.pending(record);
        for (const k of Object.keys(pending)) shown.add(k);
        await stream.send(record.token, pending);
      }
    }
    const left = deadline - Date.now();
    if (isTerminal(record.status) || left <= 0) break;
    record = await deps.operations.waitFor(key, left, stream || call ? unshown : () => false, undefined, signal);
  }
  if (!isTerminal(record.status)) return handleResult(statusFields(record), nextStep(record));
  if (record.status === 'canceled') return handleResult(statusFields(record), nextStep(record), true);
  const response = finalResponse(record, deps);
  if (!response) throw new OperationError('INTERNAL', 'The operation ended without an outcome');
  // A tool that ended in a protocol error answers with that JSON-RPC error, as its own call would have.
  if ('error' in response) throw new ProtocolError(response.error.code, response.error.message, response.error.data);
  return response.result;
}

/**
 * An `operation_result` call as a multi round-trip call: its retry must name the same
 * operation, and its state lives no longer than the operation can. None when the tool
 * is no longer served (nothing bounds its run then), so its questions are not shown.
 */
function resultCall(record: OperationRecord, operationId: string, view: RequestView, deps: McpDeps): RoundCall | undefined {
  const tool = deps.catalog.get(record.tool);
  return tool ? { tool: { ...tool, name: OPERATION_RESULT }, arguments: { operationId }, view, dialect: DIALECT } : undefined;
}

async function operationCancel(args: { operationId: string }, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  const key = keyOf(view, args.operationId);
  const before = await readHandle(deps, key);
  if (isTerminal(before.status)) {
    return handleResult(statusFields(before), `Nothing to cancel: ${nextStep(before)}`);
  }
  // The core keeps the real outcome of a run that finished before the stop took effect.
  const after = await deps.operations.cancel(key, 'Canceled by operation_cancel');
  const lead = after.status === 'canceled' ? `Canceled ${after.tool}.` : `${after.tool} finished before it could be canceled.`;
  return handleResult(statusFields(after), after.status === 'canceled' ? lead : `${lead} ${nextStep(after)}`);
}

async function operationList(args: { cursor?: string | undefined }, view: RequestView, deps: McpDeps): Promise<CallToolResultShape> {
  // Owner-scoped index pages, newest first; other dialects' operations are skipped.
  const found: OperationRecord[] = [];
  let next = boundedCursor(args.cursor);
  for (let pages = 0; pages < MAX_STORE_PAGES && found.length === 0; pages++) {
    const page = await deps.operations.list(view.ownerId, { limit: LIST_PAGE_SIZE, ...(next === undefined ? {} : { cursor: next }) });
    found.push(...page.items.filter((r) => r.dialect === DIALECT));
    next = page.nextCursor;
    if (next === undefined) break;
  }
  const operations = found.map((record) => ({
    ...statusFields(record),
    tool: record.tool,
    createdAt: new Date(record.createdAt).toISOString(),
  }));
  const lines = found.map((r) => `- ${r.token}: ${r.tool}, ${handleStatus(r)}`);
  const more = next === undefined ? '' : `\nThere are more: call operation_list with cursor ${JSON.stringify(next)}.`;
  const listed =
    lines.length === 0
      ? next === undefined
        ? 'You have no operations.'
        : 'No operations on this page.'
      : `Your operations, newest first:\n${lines.join('\n')}`;
  const text = `${listed}${more}`;
  return handleResult({ operations, ...(next === undefined ? {} : { nextCursor: next }) }, text);
}
