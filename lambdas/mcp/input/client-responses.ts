/**
 * The client's answers to questions sent by server-requests.ts: a POST whose body is a
 * JSON-RPC response (or a batch of responses only) to ids of ours is taken here, before the
 * SDK parses it, and handed to the core, which resumes the waiting state. Any instance takes
 * any answer: the id names the operation and the question, the POST's principal scopes it.
 *
 * Streamable HTTP: "If the input is a JSON-RPC response or notification: If the server
 * accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If
 * the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400
 * Bad Request). The HTTP response body MAY comprise a JSON-RPC error response that has no id."
 */
import type { InputAnswer } from '../../operations/input-protocol.ts';
import { MAX_INPUT_KEY_LENGTH, type ClosedAnswer } from '../../operations/input-requests.ts';
import { OperationError } from '../../operations/operation-error.ts';
import { isObject } from '../../shared/json-values.ts';
import { MAX_TOKEN_LENGTH } from '../dialects/dialect-support.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import { parseInputRequestId } from './server-requests.ts';

/** One answer, read off the wire: the question it answers and what the client said. */
export type ClientAnswer = { token: string; key: string; answer: InputAnswer };

/** A body of answers to our questions, or why it is refused; `undefined` for any other body. */
export type ParsedResponses = { ok: true; answers: ClientAnswer[] } | { ok: false; message: string };

/**
 * Whether `body` is answers to our questions. A body that holds anything but responses, or
 * no response to an id of ours, is `undefined`: the SDK handles it as before. Responses to
 * ids that are not ours, in a batch with ours, are dropped, as the SDK would drop them.
 */
export function parseClientResponses(body: unknown): ParsedResponses | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0 || !messages.every(isResponseLike)) return undefined;
  const ours = messages.flatMap((message) => {
    const ref = parseInputRequestId(message.id);
    return ref ? [{ message, ref }] : [];
  });
  if (ours.length === 0) return undefined;
  const answers: ClientAnswer[] = [];
  for (const { message, ref } of ours) {
    const parsed = parseAnswer(message, ref.key, ref.token);
    if (!parsed.ok) return parsed;
    // A name no operation or question can have is simply unknown, as is an error answer that cannot name its operation.
    const { answer } = parsed;
    if (answer && answer.token.length <= MAX_TOKEN_LENGTH && answer.key.length <= MAX_INPUT_KEY_LENGTH) answers.push(answer);
  }
  return { ok: true, answers };
}

/**
 * Delivers the answers of a POST from `ownerId` and says what to answer it: 202 once they
 * are taken (a second answer to a question, or one to another principal's, is ignored),
 * 400 for an answer of the wrong shape or to a question that closed before it came (its
 * state timed out, or the run went on without it), 500 when the workflow did not take one.
 */
export async function acceptClientResponses(answers: readonly ClientAnswer[], ownerId: string, deps: McpDeps): Promise<Response> {
  const byToken = new Map<string, Record<string, InputAnswer>>();
  for (const { token, key, answer } of answers) byToken.set(token, { ...byToken.get(token), [key]: answer });
  const late: ClosedAnswer[] = [];
  for (const [token, byKey] of byToken) {
    try {
      const { closed } = await deps.operations.inputs.answer({ ownerId, token }, byKey);
      late.push(...closed);
    } catch (error) {
      if (error instanceof OperationError && error.code === 'INVALID_INPUT') return refuse(400, JSONRPC.INVALID_PARAMS, reworded(error));
      deps.logger.error('answer not delivered', { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      return refuse(500, JSONRPC.INTERNAL_ERROR, 'Internal error: the answer was not delivered; send it again');
    }
  }
  // Streamable HTTP: "If the server cannot accept the input, it MUST return an HTTP error status code".
  if (late.length > 0) return refuse(400, JSONRPC.INVALID_PARAMS, lateMessage(late));
  return new Response(null, { status: 202 });
}

/** "The question confirm is no longer open: it timed out before the answer came; the run went on without it." */
function lateMessage(late: readonly ClosedAnswer[]): string {
  const [first] = late;
  if (!first) return 'The question is no longer open';
  const others = late.length > 1 ? ` (and ${late.length - 1} more)` : '';
  const why = first.reason === 'timed-out' ? 'it timed out before the answer came' : 'the run stopped waiting for it';
  return `The question ${first.key}${others} is no longer open: ${why}; the run went on without the answer`;
}

/** A refusal of the whole body, as an HTTP error with a JSON-RPC error that has no id. */
export function refuse(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });
}

type ResponseLike = Record<string, unknown> & { id?: unknown };
type ParsedAnswer = { ok: true; answer?: ClientAnswer } | { ok: false; message: string };

/** A message that is a response (no method; a result or an error), well-formed or not. */
function isResponseLike(message: unknown): message is ResponseLike {
  return isObject(message) && !('method' in message) && ('result' in message || 'error' in message);
}

function parseAnswer(message: ResponseLike, key: string, idToken: string | undefined): ParsedAnswer {
  const invalid = (why: string): ParsedAnswer => ({ ok: false, message: `Invalid response to ${String(message.id)}: ${why}` });
  if (message.jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0"');
  if ('result' in message && 'error' in message) return invalid('a response has either result or error, not both');
  if ('error' in message) {
    const { error } = message;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') {
      return invalid('error must be an object with an integer code and a string message');
    }
    // Only a client-chosen token too long for the id leaves it out; an error carries no result to name it.
    if (idToken === undefined) return { ok: true };
    const answer: InputAnswer = { error: { code: error.code as number, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
    return { ok: true, answer: { token: idToken, key, answer } };
  }
  const { result } = message;
  if (!isObject(result)) return invalid('result must be an object');
  // SEP-1391: "In the case of requests, the client MUST respond with the same _operation.token for association."
  const { _operation: operation, ...rest } = result;
  const named = isObject(operation) && typeof operation.token === 'string' ? operation.token : undefined;
  if (operation !== undefined && named === undefined) return invalid('result._operation.token must be a string');
  if (named !== undefined && idToken !== undefined && named !== idToken) return invalid('result._operation.token is not the token of the operation that asked');
  const token = idToken ?? named;
  if (token === undefined) return invalid('result._operation.token must name the operation that asked');
  return { ok: true, answer: { token, key, answer: { result: rest } } };
}

/**
 * mcp-input-protocol.ts names the field as the 2026-07-28 wire does (`inputResponses.<key>.action`); here
 * it is the response's result: "Invalid answer to confirm: result.action must be ...".
 */
function reworded(error: OperationError): string {
  const field = isObject(error.data) && typeof error.data.field === 'string' ? error.data.field : undefined;
  const match = field === undefined ? undefined : /^inputResponses\.(.+?)((?:\.(?:action|content|role|roots))?)$/.exec(field);
  if (!field || !match || !error.message.startsWith(`Invalid ${field}: `)) return error.message;
  return `Invalid answer to ${match[1]}: result${match[2]} ${error.message.slice(`Invalid ${field}: `.length)}`;
}
