/**
 * A 2026-07-28 `tools/call` the client waits on, answered with the tool's result. When the
 * execution asks the client something, the call answers with multi round-trip requests
 * (SEP-2322): `resultType: "input_required"` with the open questions and a `requestState`;
 * the client retries the same call with its `inputResponses` and that state, and the same
 * execution goes on. One request is bounded by the tool's sync timeout, whatever rounds it
 * goes through (answers it carries, questions that settle away): they share one deadline.
 */
import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import type { SyncStep, SyncStepInput } from '../../operations/operations-service.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { answersOf, continueRetry, inputRequiredResult, requestDeadline, retryEnded, roundOf, runRound, type RoundCall } from '../input/input-responses.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import type { RequestView } from '../edge/request-view.ts';
import { toCallToolResult } from '../results/tool-result.ts';

/** Runs one round of a waited-on 2026-07-28 `tools/call`: its result, or the questions it stopped at. */
export async function modernSyncCall(
  tool: ToolSpec,
  args: Record<string, unknown>,
  view: RequestView,
  ctx: ServerContext,
  deps: McpDeps,
): Promise<Record<string, unknown>> {
  // Taken first: delivering the retry's answers and every round after it count against one bound.
  const deadline = requestDeadline({ tool }, deps);
  const call: RoundCall = { tool, arguments: args, view, dialect: 'sync' };
  const step = await modernRound(call, { ...roundOf(call), atBound: 'stop', onQuestion: 'return', deadline }, ctx, deps);
  if (step.kind === 'input-required') return inputRequiredResult(step.record, call, deps);
  // A run that is stopped at its bound is handed off only when the client went away: its run
  // goes on, and the SDK sends nothing for an aborted request.
  if (step.kind === 'handed-off') throw new ProtocolError(JSONRPC.INTERNAL_ERROR, 'The client went away before the call finished');
  return toCallToolResult(step.outcome, tool);
}

/**
 * One round of a 2026-07-28 call: a retry goes on with the operation its `requestState`
 * names, and a first call's own `inputResponses` may answer the questions its run asks.
 */
export async function modernRound(call: RoundCall, round: SyncStepInput, ctx: ServerContext, deps: McpDeps): Promise<SyncStep> {
  const resume = await continueRetry(ctx, call, deps);
  const offered = resume === undefined ? answersOf(ctx.mcpReq.inputResponses ?? {}) : {};
  // The request's signal: a client that goes away ends the wait, not the run.
  const signalled = { ...round, signal: ctx.mcpReq.signal, ...(resume === undefined ? {} : { resume }) };
  return runRound(signalled, deps, offered).catch((error: unknown) => {
    throw resume === undefined ? error : retryEnded(error);
  });
}
