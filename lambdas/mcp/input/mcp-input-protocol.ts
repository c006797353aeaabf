/**
 * The MCP words for questions asked mid-run, as the core's `InputProtocol`: which
 * server-to-client requests a state may ask (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`), which client capabilities allow each, and what the client's result to each
 * does to the waiting state. The answers' fields are named as the 2026-07-28 wire carries
 * them (`inputResponses.<key>`); client-responses.ts rewords them for a JSON-RPC response.
 */
import * as z from 'zod';
import { INPUT_ERRORS } from '../../operations/input-requests.ts';
import type { InputAnswer, InputProtocol, ParsedInputAnswer, ParsedInputRequest } from '../../operations/input-protocol.ts';
import type { InputKind, InputRequestMessage } from '../../operations/operation.ts';
import { isObject } from '../../shared/json-values.ts';

/** The server-to-client requests a state may ask. */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

const anObject = (error: string) => z.looseObject({}, { error });

/** A request as a state writes it; `params` may be left out. */
const InputRequestShape = z.looseObject({
  method: z.unknown(),
  params: anObject('params must be an object').nullish(),
});

/** The params each request must have, by method (and, for elicitation, by mode). */
const FormElicitationParams = z.looseObject({
  message: z.string({ error: 'params.message must be a string' }),
  requestedSchema: anObject('params.requestedSchema must be an object in form mode'),
});
const URL_MODE = 'params.url and params.elicitationId must be strings in URL mode';
const UrlElicitationParams = z.looseObject({
  message: z.string({ error: 'params.message must be a string' }),
  url: z.string({ error: URL_MODE }),
  elicitationId: z.string({ error: URL_MODE }),
});
const SamplingParams = z.looseObject({
  messages: z.array(z.unknown(), { error: 'params.messages must be an array' }),
  maxTokens: z.number({ error: 'params.maxTokens must be a number' }),
});
const RootsParams = z.looseObject({});

const PARAMS_OF: Record<InputMethod, (params: Record<string, unknown>) => z.ZodType> = {
  'elicitation/create': (params) => (params.mode === 'url' ? UrlElicitationParams : FormElicitationParams),
  'sampling/createMessage': () => SamplingParams,
  'roots/list': () => RootsParams,
};

/** The client's result to each request, by method; a declined or cancelled elicitation is read before this. */
const RESULT_OF: Record<InputMethod, z.ZodType> = {
  'elicitation/create': z.looseObject({
    action: z.literal('accept', { error: 'must be "accept", "decline" or "cancel"' }),
    content: anObject('must be an object').optional(),
  }),
  'sampling/createMessage': z.looseObject({
    role: z.string({ error: 'must be a string' }),
    content: z.union([z.looseObject({}), z.array(z.unknown())], { error: 'must be a content block' }),
  }),
  'roots/list': z.looseObject({ roots: z.array(z.unknown(), { error: 'must be an array' }) }),
};

function isInputMethod(method: unknown): method is InputMethod {
  return typeof method === 'string' && Object.hasOwn(PARAMS_OF, method);
}

/** Checks that a state asked a real server-to-client request, and keeps only its method and params. */
export function parseInputRequest(value: unknown): ParsedInputRequest {
  const refuse = (why: string): ParsedInputRequest => ({ ok: false, message: `request ${why}` });
  if (!isObject(value)) return refuse('must be an object with method and params');
  const shape = InputRequestShape.safeParse(value);
  if (!shape.success) return refuse(shape.error.issues[0]?.message ?? 'is invalid');
  const { method } = value;
  const params = shape.data.params ?? {};
  if (!isInputMethod(method)) return refuse('method must be elicitation/create, sampling/createMessage or roots/list');
  const checked = PARAMS_OF[method](params).safeParse(params);
  if (!checked.success) return refuse(checked.error.issues[0]?.message ?? 'params are invalid');
  const request: InputRequestMessage = { method, params };
  const kind = inputKindOf(request);
  return { ok: true, request, kind, capability: capabilityName(kind) };
}

/**
 * What an answer does to the waiting state. An accepted elicitation, a sampling result and
 * a roots list resume it with the client's result; a declined or cancelled elicitation and
 * an error response fail it, so its Catch decides. A result of the wrong shape is refused.
 */
export function parseInputAnswer(inputKey: string, request: InputRequestMessage, answer: InputAnswer): ParsedInputAnswer {
  if ('error' in answer) {
    return {
      ok: true,
      delivery: { kind: 'failure', error: INPUT_ERRORS.error, cause: JSON.stringify({ code: answer.error.code, message: answer.error.message }) },
    };
  }
  const { result } = answer;
  const field = `inputResponses.${inputKey}`;
  if (!isObject(result)) return { ok: false, field, problem: 'must be an object' };
  const method = request.method;
  if (method === 'elicitation/create' && (result.action === 'decline' || result.action === 'cancel')) {
    return { ok: true, delivery: { kind: 'failure', error: INPUT_ERRORS.declined, cause: JSON.stringify({ action: result.action }) } };
  }
  // A question is checked when it is asked, so its method is one of ours.
  const checked = isInputMethod(method) ? RESULT_OF[method].safeParse(result) : undefined;
  const issue = checked?.success === false ? checked.error.issues[0] : undefined;
  if (issue) return { ok: false, field: [field, ...issue.path.map(String)].join('.'), problem: issue.message };
  return { ok: true, delivery: { kind: 'success', output: result } };
}

/** The capability a request needs. */
export function inputKindOf(request: InputRequestMessage): InputKind {
  if (request.method === 'sampling/createMessage') return 'sampling';
  if (request.method === 'roots/list') return 'roots';
  return request.params.mode === 'url' ? 'elicitation.url' : 'elicitation.form';
}

/**
 * The request kinds a client's declared capabilities allow. "For backwards compatibility,
 * an empty capabilities object is equivalent to declaring support for form mode only."
 */
export function inputKindsOf(capabilities: Record<string, unknown>): InputKind[] {
  const kinds: InputKind[] = [];
  const elicitation = capabilities.elicitation;
  if (isObject(elicitation)) {
    const form = 'form' in elicitation;
    const url = 'url' in elicitation;
    if (form || !url) kinds.push('elicitation.form');
    if (url) kinds.push('elicitation.url');
  }
  if (isObject(capabilities.sampling)) kinds.push('sampling');
  if (isObject(capabilities.roots)) kinds.push('roots');
  return kinds;
}

/** The capabilities an execution may read to decide what to ask (`operation.clientCapabilities`). */
export function inputCapabilitiesOf(capabilities: Record<string, unknown>): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const name of ['elicitation', 'sampling', 'roots']) if (isObject(capabilities[name])) declared[name] = capabilities[name];
  return declared;
}

function capabilityName(kind: InputKind): string {
  return kind === 'elicitation.url' ? 'elicitation (URL mode)' : kind === 'elicitation.form' ? 'elicitation' : kind;
}

/** The MCP questions, for the core. */
export const mcpInputProtocol: InputProtocol = {
  capabilitiesOf: inputCapabilitiesOf,
  kindsOf: inputKindsOf,
  parseRequest: parseInputRequest,
  parseAnswer: parseInputAnswer,
};
