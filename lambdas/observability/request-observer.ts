/**
 * What the MCP edge tells the request context and the metrics about one HTTP request: its
 * method, tool, principal and operation (hashed) and the dialect its shape implies, before
 * any record is read (a record the request touches then names the exact dialect, see
 * observed-record-store.ts); and, once it is answered, whether it was a status poll.
 */
import { isObject } from '../shared/json-values.ts';
import { METRIC, type MetricsRecorder } from './metrics-recorder.ts';
import { annotateRequest, hashForLog, requestLogFields, withRequestContext, type RequestLogFields } from './request-context.ts';

type Era = 'modern' | 'legacy';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** The dialect a request's shape implies, per era, until the SDK has decided the era. */
const dialectsByEra = new WeakMap<RequestLogFields, Record<Era, string>>();

/** Names the parsed JSON-RPC body's method, tool, operation and implied dialect, and the principal, in the request context. */
export function describeRequest(body: unknown, ownerId: string): void {
  const fields: RequestLogFields = { principalHash: ownerId };
  if (Array.isArray(body)) fields.method = 'batch';
  else if (isObject(body) && typeof body.method === 'string') {
    fields.method = body.method;
    const params = isObject(body.params) ? body.params : {};
    if (body.method === 'tools/call' && typeof params.name === 'string') fields.tool = params.name;
    const operation = operationIdOf(params);
    if (operation !== undefined) fields.operationHash = hashForLog(operation);
    const byEra = impliedDialects(body.method, params);
    if (byEra.modern === byEra.legacy) fields.dialect = byEra.modern;
    const context = requestLogFields();
    if (context) dialectsByEra.set(context, byEra);
  }
  annotateRequest(fields);
}

/** The SDK decided the request's era: the dialect its shape implies is now known. */
export function noteEra(era: Era): void {
  const context = requestLogFields();
  if (!context) return;
  // The SDK decides the era before any handler reads a record (which would name the dialect exactly).
  const dialect = dialectsByEra.get(context)?.[era];
  annotateRequest({ era, ...(dialect === undefined ? {} : { dialect }) });
}

/** What a poll is: a request of a status method, or a `tools/call` of the status tool (handle tools). */
export interface PollMethods {
  statusMethods: ReadonlySet<string>;
  statusTool?: string;
}

/** Counts the polls in an answered body, with the dialect of the operation they read. */
export function countPolls(metrics: MetricsRecorder, body: unknown, polls: PollMethods): void {
  const messages = Array.isArray(body) ? body : [body];
  let count = 0;
  for (const message of messages) {
    if (!isObject(message) || typeof message.method !== 'string') continue;
    if (polls.statusMethods.has(message.method)) count++;
    else if (polls.statusTool !== undefined && message.method === 'tools/call' && isObject(message.params) && message.params.name === polls.statusTool) count++;
  }
  if (count > 0) metrics.count(METRIC.polls, { dialect: requestLogFields()?.dialect ?? 'unknown' }, count);
}

/** The Lambda's invocation context, as far as logs use it. */
export interface InvocationContext {
  awsRequestId?: string;
}

/**
 * Runs one invocation in a request context named by its request id, and flushes the
 * metrics it recorded once it is over (for the MCP Lambda: once the response stream ended).
 */
export function observeInvocation(metrics: MetricsRecorder) {
  return async <T>(context: InvocationContext | undefined, run: () => Promise<T>): Promise<T> => {
    try {
      return await withRequestContext(context?.awsRequestId ? { function_request_id: context.awsRequestId } : {}, run);
    } finally {
      metrics.flush();
    }
  };
}

/** The token or task id the request names (SEP-1391 `token` or `operation.token`, Tasks `taskId`). */
function operationIdOf(params: Record<string, unknown>): string | undefined {
  if (typeof params.taskId === 'string') return params.taskId;
  if (typeof params.token === 'string') return params.token;
  if (isObject(params.operation) && typeof params.operation.token === 'string') return params.operation.token;
  return undefined;
}

/** The dialect the decision table (DESIGN §5) gives a request of this shape, in each era; `none` for no async dialect. */
function impliedDialects(method: string, params: Record<string, unknown>): Record<Era, string> {
  if (method.startsWith('tools/async/') || (method === 'tools/call' && isObject(params.operation))) {
    return { modern: 'sep-1391', legacy: 'sep-1391' };
  }
  if (method.startsWith('tasks/')) return { modern: 'tasks-2026-07-28', legacy: 'tasks-2025-11-25' };
  if (method !== 'tools/call') return { modern: 'none', legacy: 'none' };
  const meta = isObject(params._meta) ? params._meta : {};
  const capabilities = isObject(meta[CLIENT_CAPABILITIES]) ? meta[CLIENT_CAPABILITIES] : {};
  const declared = isObject(capabilities.extensions) && TASKS_EXTENSION in capabilities.extensions;
  return {
    modern: declared ? 'tasks-2026-07-28' : 'none',
    legacy: isObject(params.task) ? 'tasks-2025-11-25' : 'none',
  };
}
