/**
 * Questions asked mid-run on the 2026-07-28 wire, the client's side: the answers a retried
 * `tools/call` (multi round-trip requests, SEP-2322) or a `tasks/update` carries, and the
 * `input_required` result a round of a call ends with. Nothing waits in memory: the
 * questions live on the operation record and the retry names its operation in a signed
 * `requestState` (request-state.ts), so any instance takes any round.
 */
import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import { argumentsHash } from '../../operations/fingerprint.ts';
import type { InputAnswer } from '../../operations/input-protocol.ts';
import type { Dialect, OperationKey, OperationRecord } from '../../operations/operation.ts';
import { OperationError } from '../../operations/operation-error.ts';
import type { SyncStep, SyncStepInput } from '../../operations/operations-service.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { openRequestState, REQUEST_STATE_TTL_SECONDS, RequestStateError, sealRequestState, type ExpectedCall } from './request-state.ts';
import type { RequestView } from '../edge/request-view.ts';
import { verifyWithKeys } from '../../shared/server-key.ts';

/**
 * How long a round that stopped at a question waits for more (milliseconds): the branches
 * of a Parallel state ask one after another, and a client shown all of them at once answers
 * in one retry instead of one per branch. A question whose state runs alone comes back at once.
 */
export const QUESTION_SETTLE_MS = 400;

/** One `tools/call` that may take several rounds. */
export interface RoundCall {
  tool: ToolSpec;
  /** Validated arguments. */
  arguments: Record<string, unknown>;
  view: RequestView;
  /** The wire the call's operation belongs to. */
  dialect: Dialect;
}

/** What every round of `call` tells the core about it: whose, which tool, which request, what the client can be asked. */
export function roundOf(call: RoundCall): Pick<SyncStepInput, 'ownerId' | 'tool' | 'arguments' | 'requestId' | 'clientCapabilities' | 'dialect'> {
  const { tool, arguments: args, view, dialect } = call;
  return { ownerId: view.ownerId, tool, arguments: args, requestId: view.requestKey, clientCapabilities: view.clientCapabilities, dialect };
}

/**
 * InputResponses as the core takes them. Each value is the client's result for the question
 * of that key ("values are the client's result for each request"); the SDK has already set
 * aside entries that are not (wrapped `{method, result}` envelopes), and those keys stay open.
 */
export function answersOf(inputResponses: Record<string, unknown>): Record<string, InputAnswer> {
  return Object.fromEntries(Object.entries(inputResponses).map(([key, result]) => [key, { result }]));
}

/**
 * For a retry (a request with `requestState`): checks the state, delivers the answers it
 * carries, and returns the operation to go on waiting for. Keys that are not open are
 * ignored; an answer of the wrong shape refuses the whole retry with -32602 before any is
 * delivered. `undefined` for a first call, which has no operation to answer yet: its
 * inputResponses can only answer the questions its own run asks (see `runRound`).
 */
export async function continueRetry(ctx: ServerContext, call: RoundCall, deps: McpDeps): Promise<OperationKey | undefined> {
  const state = ctx.mcpReq.requestState();
  if (state === undefined) return undefined;
  let token: string;
  try {
    // Sealed with the current key or, across a rotation, the previous one.
    const open = (key: Uint8Array) => openRequestState(state, key, expectedCall(call), Date.now());
    ({ token } = await verifyWithKeys(deps.secretKey, open, (error) => error instanceof RequestStateError && error.problem === 'forged'));
  } catch (error) {
    if (!(error instanceof RequestStateError)) throw error;
    if (error.expiredClaims?.dialect === 'sync') await abandonRound({ ownerId: call.view.ownerId, token: error.expiredClaims.token }, deps);
    throw new ProtocolError(JSONRPC.INVALID_PARAMS, error.message, { field: 'requestState', reason: error.problem });
  }
  const key: OperationKey = { ownerId: call.view.ownerId, token };
  const answers = answersOf(ctx.mcpReq.inputResponses ?? {});
  if (Object.keys(answers).length > 0) await deps.operations.inputs.answer(key, answers);
  return key;
}

/**
 * One round of a call (see `runSyncStep`). A round that stops at questions first lets the
 * questions asked alongside settle; if they are all gone by then (the run ended, or a state
 * stopped waiting), the call goes on waiting as a retry would.
 */
export async function runRound(input: SyncStepInput, deps: McpDeps, offered: Record<string, InputAnswer> = {}): Promise<SyncStep> {
  // One deadline for the whole request: the rounds it goes on with share what is left of it.
  const deadline = input.deadline ?? requestDeadline(input, deps);
  return runRoundUntil({ ...input, deadline }, deps, offered, deadline);
}

/**
 * The deadline (epoch ms) of a request that runs the rounds of `input`: now plus its bound.
 * Taken when the request arrives, so everything it does before its first round counts too.
 */
export function requestDeadline(input: Pick<SyncStepInput, 'tool' | 'boundSeconds'>, deps: McpDeps): number {
  const { maxBlockingSeconds } = deps.operations.limits;
  return Date.now() + Math.min(input.boundSeconds ?? input.tool.timing.syncTimeoutSeconds, maxBlockingSeconds) * 1000;
}

async function runRoundUntil(input: SyncStepInput, deps: McpDeps, offered: Record<string, InputAnswer>, deadline: number): Promise<SyncStep> {
  const step = await deps.operations.runSyncStep(input);
  if (step.kind !== 'input-required') return step;
  // Only a state that runs beside others (a Parallel branch, a Map) leaves room for more questions.
  const settleMs = Object.values(step.record.pendingInputs ?? {}).some((entry) => entry.concurrent !== false) ? QUESTION_SETTLE_MS : 0;
  const settled = await deps.operations.waitFor(step.record, Math.max(0, Math.min(settleMs, deadline - Date.now())), () => false);
  const key = { ownerId: step.record.ownerId, token: step.record.token };
  const open = deps.operations.inputs.pending(settled);
  // Answers the call already carries for exactly these questions are taken (the rest of
  // them ignored, as unexpected params are), once: then the call goes on as a retry would.
  const fitting = Object.fromEntries(Object.entries(offered).filter(([inputKey]) => inputKey in open));
  if (Object.keys(fitting).length > 0) {
    await deps.operations.inputs.answer(key, fitting);
    return runRoundUntil({ ...input, resume: key }, deps, {}, deadline);
  }
  if (Object.keys(open).length > 0) return { kind: 'input-required', record: settled };
  return deps.operations.runSyncStep({ ...input, resume: key });
}

/**
 * The InputRequiredResult of a round that stopped at questions: every open question by its
 * key, and a fresh state for the retry. It expires with the operation at the latest.
 */
export async function inputRequiredResult(record: OperationRecord, call: RoundCall, deps: McpDeps): Promise<Record<string, unknown>> {
  // A synchronous call's record lives no longer than the state: unanswered, the round is abandoned.
  const expiresAt = await deps.operations.holdForRetry(record, call.tool, REQUEST_STATE_TTL_SECONDS);
  const requestState = sealRequestState({ token: record.token, ...expectedCall(call), expiresAt }, await deps.secretKey());
  return { resultType: 'input_required', inputRequests: deps.operations.inputs.pending(record), requestState };
}

/**
 * A synchronous round whose state expired unanswered: its execution is stopped and its slot
 * freed (the call it belonged to is over). Best effort: slot repair ends it otherwise.
 */
async function abandonRound(key: OperationKey, deps: McpDeps): Promise<void> {
  try {
    await deps.operations.abandon(key, 'The client did not answer before its requestState expired');
  } catch (error) {
    deps.logger.warn('an abandoned synchronous round was not stopped; slot repair ends it', { error: error instanceof Error ? error.name : String(error) });
  }
}

/**
 * A retry whose operation is gone (expired, or removed) cannot go on: said in the words of
 * the retry, since the client never saw an operation. Other errors pass unchanged.
 */
export function retryEnded(error: unknown): unknown {
  if (!(error instanceof OperationError) || (error.code !== 'NOT_FOUND' && error.code !== 'EXPIRED')) return error;
  return new ProtocolError(JSONRPC.INVALID_PARAMS, 'Invalid requestState: the call it continues is over; call the tool again without it', {
    field: 'requestState',
    reason: 'ended',
  });
}

function expectedCall(call: RoundCall): ExpectedCall {
  return { ownerId: call.view.ownerId, tool: call.tool.name, argumentsHash: argumentsHash(call.tool.name, call.arguments), dialect: call.dialect };
}
