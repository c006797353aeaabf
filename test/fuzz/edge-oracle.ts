/**
 * What every answer of the edge must satisfy, whatever it was sent:
 * - the handler never throws, and never answers 5xx except with the documented -32603; no
 *   dependency of the target can fail, so an in-band -32603 is the wrong code for a client's mistake;
 * - a JSON-RPC error carries a code the server documents, with the HTTP status the
 *   handler maps it to (json-rpc-errors.ts, http-handler.ts and the SDK's ladder table),
 *   and a request the SDK's inbound ladder refuses is answered exactly as the ladder says;
 * - a response answers the request's own id (or null when it could not read one);
 * - a rejected call creates no record for its principal;
 * - no tool argument value (marker) and no seeded result reaches a log line.
 */
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { JSONRPC } from '../../lambdas/mcp/edge/json-rpc-errors.ts';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../lambdas/mcp/edge/request-body-guard.ts';
import { MAX_REQUEST_ID_LENGTH } from '../../lambdas/mcp/edge/request-view.ts';
import type { FuzzCase } from './fuzz-case.ts';
import { MODERN, parseAnswerMessages, RESULT_MARKER, type TargetAnswer } from './fuzz-target.ts';

/** The SDK's code for transport refusals (Not Acceptable, unsupported media type or protocol version). */
const SDK_TRANSPORT_ERROR = -32000;
/** The Streamable HTTP code for an unknown or ended session (legacy-session.ts). */
const SESSION_NOT_FOUND = -32001;
/** 2026-07-28: the protocol version the request names is not supported. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** How the oracle words a -32603 that answered a request the target cannot fail on. */
export const INTERNAL_FOR_CLIENT_MISTAKE = '-32603 (internal error) answered a request no dependency failed on';

/** Every code the server documents, with the HTTP statuses it may travel with. */
const STATUSES_FOR_CODE: Record<number, { legacy: readonly number[]; modern: readonly number[] }> = {
  [JSONRPC.PARSE_ERROR]: { legacy: [400], modern: [400] },
  // In-band (200) from a handler; 400 from the body guard, the SDK ladder or a refused client answer; 413 for a body over the limit.
  [JSONRPC.INVALID_REQUEST]: { legacy: [200, 400, 413], modern: [200, 400, 413] },
  // "2026-07-28 Streamable HTTP answers an unknown method with HTTP 404; the legacy era stays 200" (mcp-server-factory.ts).
  [JSONRPC.METHOD_NOT_FOUND]: { legacy: [200], modern: [404] },
  // In-band; 400 only for a client's answer of the wrong shape (client-responses.ts) or the envelope rung.
  [JSONRPC.INVALID_PARAMS]: { legacy: [200, 400], modern: [200, 400] },
  // In-band, or 500 where the edge itself failed (session checks, answer delivery).
  [JSONRPC.INTERNAL_ERROR]: { legacy: [200, 500], modern: [200, 500] },
  [JSONRPC.HEADER_MISMATCH]: { legacy: [400], modern: [400] },
  [JSONRPC.MISSING_CAPABILITY]: { legacy: [], modern: [400] },
  [JSONRPC.TOO_MANY_ACTIVE_OPERATIONS]: { legacy: [429], modern: [429] },
  [UNSUPPORTED_PROTOCOL_VERSION]: { legacy: [400], modern: [400] },
  [SDK_TRANSPORT_ERROR]: { legacy: [400, 406, 413, 415], modern: [400, 406, 413, 415] },
  [SESSION_NOT_FOUND]: { legacy: [404], modern: [404] },
  // The Events extension's codes (SEP-3415 "Error Handling"), in-band, on the 2026-07-28 wire only.
  [JSONRPC.NOT_FOUND]: { legacy: [], modern: [200] },
  [JSONRPC.FORBIDDEN]: { legacy: [], modern: [200] },
  [JSONRPC.RESOURCE_EXHAUSTED]: { legacy: [], modern: [200] },
  [JSONRPC.UNSUPPORTED]: { legacy: [], modern: [200] },
  [JSONRPC.CALLBACK_ENDPOINT_ERROR]: { legacy: [], modern: [200] },
};

/** What the oracle found in one answer. */
export interface Verdict {
  problems: string[];
  status: number;
  /** The JSON-RPC outcome: `result`, `error <code>`, or `none` (no response message). */
  outcome: string;
  /** A 5xx the oracle accepted because its body is the documented -32603. */
  documented5xx: boolean;
  /** Records the request created, and log lines it caused (so the record and log checks are seen to bite). */
  createdRecords: number;
  logLines: number;
}

export interface Observation {
  fuzzCase: FuzzCase;
  answer: TargetAnswer;
  /** The principal's record tokens before and after the request. */
  before: Set<string>;
  after: Set<string>;
}

export function judge({ fuzzCase, answer, before, after }: Observation): Verdict {
  const problems: string[] = [];
  const { status } = answer;
  const created = [...after].filter((token) => !before.has(token));
  const counts = { createdRecords: created.length, logLines: answer.logs.length };
  if (answer.thrown) return { problems: [`the handler threw: ${answer.thrown}`], status, outcome: 'thrown', documented5xx: false, ...counts };

  const sent = parseSent(fuzzCase.body);
  const facts: Facts = {
    sent,
    bytes: Buffer.byteLength(fuzzCase.body),
    depth: 'value' in sent ? depthOf(sent.value) : undefined,
    route: routeOf(fuzzCase, sent),
  };
  let messages: Array<Record<string, unknown>> = [];
  try {
    messages = parseAnswerMessages(answer.text);
  } catch {
    problems.push(`the body is neither JSON nor SSE: ${answer.text.slice(0, 120)}`);
  }
  const responses = messages.filter((m) => 'result' in m || 'error' in m);
  const errors = responses.map((m) => m.error).filter(isRecord);
  const first = responses[0];
  const outcome = first === undefined ? 'none' : isRecord(first.error) ? `error ${String(first.error.code)}` : 'result';

  const code = isRecord(first?.error) ? first.error.code : undefined;
  const documented5xx = status >= 500 && code === JSONRPC.INTERNAL_ERROR;
  if (status >= 500 && !documented5xx) problems.push(`HTTP ${status} without the documented -32603`);
  // Nothing the target depends on can fail (memory store, fake engine, fixed key), so an
  // in-band internal error can only be the answer to a client's mistake: the wrong code.
  for (const error of errors) {
    if (error.code === JSONRPC.INTERNAL_ERROR && status < 500)
      problems.push(`${INTERNAL_FOR_CLIENT_MISTAKE}: ${String(error.message).replace(/\s+/g, ' ').slice(0, 160)}`);
  }

  const era = eraOf(fuzzCase, facts);
  for (const error of errors) {
    const allowed = typeof error.code === 'number' ? STATUSES_FOR_CODE[error.code] : undefined;
    if (!allowed) problems.push(`undocumented error code ${JSON.stringify(error.code)}: ${String(error.message).slice(0, 120)}`);
    else if (responses.length === 1 && !allowed[era].includes(status)) {
      problems.push(`error ${String(error.code)} travelled with HTTP ${status} (expected ${allowed[era].join(' or ') || 'never'} in the ${era} era)`);
    }
  }
  problems.push(...statusRules(facts, status, code));
  problems.push(...ladderRules(fuzzCase, facts, status, code));
  if (sent.kind === 'request' && responses.length === 1 && first !== undefined) problems.push(...idRules(sent.id, first));
  if (sent.kind === 'request' && responses.length === 0 && status < 300) problems.push(`a request got HTTP ${status} and no response`);

  const rejected = status >= 400 || errors.length > 0;
  if (rejected && sent.kind !== 'batch' && created.length > 0) problems.push(`a rejected call created record(s) ${created.join(', ')}`);

  for (const marker of fuzzCase.markers) {
    const line = answer.logs.find((l) => l.includes(marker));
    if (line) problems.push(`argument value ${marker} reached the logs: ${excerpt(line, marker)}`);
  }
  const resultLine = answer.logs.find((l) => l.includes(RESULT_MARKER));
  if (resultLine) problems.push(`a tool result reached the logs: ${excerpt(resultLine, RESULT_MARKER)}`);
  return { problems, status, outcome, documented5xx, ...counts };
}

/** What was sent, parsed once. */
type Sent =
  | { kind: 'request'; id: unknown; message: Record<string, unknown>; value: unknown }
  | { kind: 'notification' | 'response' | 'other'; message?: Record<string, unknown>; value: unknown }
  | { kind: 'batch'; messages: unknown[]; value: unknown }
  | { kind: 'unparseable' };

/** The body's facts every rule reads: its parse, its size in bytes, its nesting depth and the SDK's route for it. */
interface Facts {
  sent: Sent;
  bytes: number;
  /** `undefined` when the body is not JSON. */
  depth: number | undefined;
  route: ReturnType<typeof classifyInboundRequest>;
}

function parseSent(body: string): Sent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { kind: 'unparseable' };
  }
  if (Array.isArray(value)) return { kind: 'batch', messages: value, value };
  if (!isRecord(value)) return { kind: 'other', value };
  if (typeof value.method === 'string')
    return 'id' in value ? { kind: 'request', id: value.id, message: value, value } : { kind: 'notification', message: value, value };
  if ('result' in value || 'error' in value) return { kind: 'response', message: value, value };
  return { kind: 'other', message: value, value };
}

/** How the SDK classifies the request (its era, or the ladder rung that refuses it). */
function routeOf(fuzzCase: FuzzCase, sent: Sent) {
  const body = sent.kind === 'batch' ? sent.messages : 'message' in sent ? sent.message : undefined;
  const header = (name: string) => fuzzCase.headers[name];
  return classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...(header('mcp-protocol-version') === undefined ? {} : { protocolVersionHeader: header('mcp-protocol-version') }),
    ...(header('mcp-method') === undefined ? {} : { mcpMethodHeader: header('mcp-method') }),
    ...(header('mcp-name') === undefined ? {} : { mcpNameHeader: header('mcp-name') }),
  });
}

/** The era the SDK serves the request in, by its own classification. */
function eraOf(fuzzCase: FuzzCase, { route }: Facts): 'legacy' | 'modern' {
  if (route.kind === 'modern') return 'modern';
  if (route.kind === 'legacy') return 'legacy';
  return fuzzCase.headers['mcp-protocol-version'] === MODERN ? 'modern' : 'legacy';
}

/**
 * A request none of the edge's own checks stops (size, depth, batch, id length, session,
 * client answers) reaches the SDK, whose ladder refusal must come back exactly as the SDK
 * states it: the same code with the same HTTP status.
 */
function ladderRules(fuzzCase: FuzzCase, { sent, bytes, depth, route }: Facts, status: number, code: unknown): string[] {
  const { headers } = fuzzCase;
  if (sent.kind === 'unparseable' || sent.kind === 'batch' || sent.kind === 'response' || headers['mcp-session-id'] !== undefined) return [];
  // The transport checks media types (415, 406) before the ladder.
  if (
    !/^application\/json\s*(;|$)/i.test(headers['content-type'] ?? '') ||
    !/application\/json/.test(headers.accept ?? '') ||
    !/text\/event-stream/.test(headers.accept ?? '')
  )
    return [];
  if (bytes > MAX_BODY_BYTES || (depth ?? 0) > MAX_JSON_DEPTH) return [];
  const id = 'message' in sent ? sent.message?.id : undefined;
  if (typeof id === 'string' && id.length > MAX_REQUEST_ID_LENGTH) return [];
  if (route.kind !== 'reject' || (route.code === code && route.httpStatus === status)) return [];
  return [`the SDK ladder refuses this (${route.cell}) with HTTP ${route.httpStatus} ${route.code}, but it was answered HTTP ${status} ${String(code)}`];
}

/** Statuses fixed by the body alone: 413 past the size limit, 400 past the nesting limit, 202 only without a request. */
function statusRules({ sent, bytes, depth }: Facts, status: number, code: unknown): string[] {
  const problems: string[] = [];
  if (bytes > MAX_BODY_BYTES && status !== 413) problems.push(`a ${bytes}-byte body got HTTP ${status}, not 413`);
  if (bytes <= MAX_BODY_BYTES && status === 413) problems.push(`a ${bytes}-byte body (within the limit) got 413`);
  if (bytes <= MAX_BODY_BYTES && depth !== undefined && depth > MAX_JSON_DEPTH) {
    if (status !== 400 || code !== JSONRPC.INVALID_REQUEST)
      problems.push(`a body nested past ${MAX_JSON_DEPTH} levels got HTTP ${status} ${String(code)}, not 400 -32600`);
  }
  if (sent.kind === 'request' && (status === 202 || status === 204)) problems.push(`a request was acknowledged with ${status} and never answered`);
  return problems;
}

/** JSON-RPC 2.0 §5: "id ... MUST be the same as the value of the id member in the Request Object"; null only when it could not be read. */
function idRules(id: unknown, response: Record<string, unknown>): string[] {
  const readable = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (!('id' in response)) return [`the response has no id member (request id ${JSON.stringify(id)?.slice(0, 40)})`];
  if (response.id === null) return readable && !('error' in response) ? ['a result answered with id null'] : [];
  if (readable && response.id !== id)
    return [`the response id ${JSON.stringify(response.id)?.slice(0, 40)} is not the request id ${JSON.stringify(id)?.slice(0, 40)}`];
  return [];
}

/** Nesting depth of a parsed value, iteratively (bodies may nest 20,000 levels). */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    max = Math.max(max, depth + 1);
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return max;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function excerpt(line: string, marker: string): string {
  const at = line.indexOf(marker);
  return line.slice(Math.max(0, at - 80), at + marker.length + 40);
}
