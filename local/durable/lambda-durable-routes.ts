/**
 * The restJson1 wire of the Lambda calls the local durable service answers, as
 * `@aws-sdk/client-lambda` sends them: Invoke (`/2015-03-31/functions/{name}/invocations`) and
 * the durable-execution calls under `/2025-12-01/`. Path labels arrive percent-encoded (an
 * execution ARN holds `:` and `/`); timestamps go out as epoch seconds, the protocol's default.
 */
import type { ErrorObject, OperationUpdate } from '@aws/durable-execution-sdk-js';
import type { DurableExecutionService } from './durable-execution-service.ts';
import { LambdaApiError } from './lambda-api-error.ts';

type Route = (request: Request, labels: string[], query: URLSearchParams) => Promise<Response>;

/** The fetch handler for `service`. */
export function lambdaDurableRoutes(service: DurableExecutionService): (request: Request) => Promise<Response> {
  const routes: [string, RegExp, Route][] = [
    ['POST', /^\/2015-03-31\/functions\/([^/]+)\/invocations$/, (request, [name = '']) => invoke(service, request, name)],
    ['GET', /^\/2025-12-01\/functions\/([^/]+)\/durable-executions$/, async (_r, [name = ''], query) => list(service, name, query)],
    [
      'GET',
      /^\/2025-12-01\/durable-executions\/([^/]+)$/,
      async (_r, [arn = ''], query) => json(service.describe(arn, query.get('IncludeExecutionData') !== 'false')),
    ],
    ['GET', /^\/2025-12-01\/durable-executions\/([^/]+)\/state$/, async (_r, [arn = '']) => json(await service.state(arn))],
    [
      'POST',
      /^\/2025-12-01\/durable-executions\/([^/]+)\/checkpoint$/,
      async (request, [arn = '']) => json(await service.checkpoint(arn, await bodyOf<CheckpointBody>(request))),
    ],
    [
      'POST',
      /^\/2025-12-01\/durable-executions\/([^/]+)\/stop$/,
      async (request, [arn = '']) => json({ StopTimestamp: service.stop(arn, await optionalBody<ErrorObject>(request)) }),
    ],
    ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/succeed$/, callback(service, 'succeed')],
    ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/fail$/, callback(service, 'fail')],
    ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/heartbeat$/, callback(service, 'heartbeat')],
  ];
  return async (request) => {
    const url = new URL(request.url);
    try {
      for (const [method, pattern, route] of routes) {
        const match = request.method === method ? pattern.exec(url.pathname) : null;
        if (match) return await route(request, match.slice(1).map(decodeURIComponent), url.searchParams);
      }
      throw new LambdaApiError('ResourceNotFoundException', `No local durable API at ${request.method} ${url.pathname}`);
    } catch (error) {
      if (error instanceof LambdaApiError) return error.toResponse();
      console.error(JSON.stringify({ level: 'error', message: 'local durable service failure', error: String(error) }));
      return new LambdaApiError('ServiceException', 'Internal failure').toResponse();
    }
  };
}

interface CheckpointBody {
  CheckpointToken?: string;
  Updates?: OperationUpdate[];
  ClientToken?: string;
}

async function invoke(service: DurableExecutionService, request: Request, functionName: string): Promise<Response> {
  const type = request.headers.get('x-amz-invocation-type') ?? 'RequestResponse';
  const name = request.headers.get('x-amz-durable-execution-name') ?? undefined;
  const body = await request.text();
  if (type === 'DryRun') return new Response(null, { status: 204 });
  const run = await service.start(functionName, name, body === '' ? undefined : body);
  const headers = { 'x-amz-durable-execution-arn': run.arn, 'x-amz-executed-version': '$LATEST' };
  if (type === 'Event') return new Response(null, { status: 202, headers });
  // A synchronous invoke answers with the execution's outcome, as Lambda does (without its
  // 15-minute bound).
  await run.whenFinished();
  if (run.status === 'SUCCEEDED') return new Response(run.result ?? 'null', { status: 200, headers });
  const error = run.error ?? { ErrorType: run.status, ErrorMessage: `Durable execution ${run.status}` };
  const payload = { errorType: error.ErrorType, errorMessage: error.ErrorMessage, stackTrace: error.StackTrace };
  return new Response(JSON.stringify(payload), { status: 200, headers: { ...headers, 'x-amz-function-error': 'Unhandled' } });
}

function list(service: DurableExecutionService, functionName: string, query: URLSearchParams): Response {
  const executions = service.list(functionName, {
    statuses: query.getAll('Statuses').flatMap((value) => value.split(',')),
    name: query.get('DurableExecutionName') ?? undefined,
    startedAfter: dateOf(query.get('StartedAfter')),
    startedBefore: dateOf(query.get('StartedBefore')),
    reverseOrder: query.get('ReverseOrder') === 'true',
  });
  const from = Number(query.get('Marker') ?? 0) || 0;
  const size = Number(query.get('MaxItems') ?? 0) || 1000;
  const page = executions.slice(from, from + size);
  const next = from + size < executions.length ? String(from + size) : undefined;
  return json({ DurableExecutions: page, NextMarker: next });
}

function callback(service: DurableExecutionService, outcome: 'succeed' | 'fail' | 'heartbeat'): Route {
  return async (request, [callbackId = '']) => {
    if (outcome === 'heartbeat') await service.callback(callbackId, 'heartbeat');
    else if (outcome === 'succeed') await service.callback(callbackId, { succeed: new Uint8Array(await request.arrayBuffer()) });
    else await service.callback(callbackId, { fail: (await optionalBody<ErrorObject>(request)) ?? {} });
    return json({});
  };
}

function dateOf(value: string | null): Date | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? new Date(seconds * 1000) : new Date(value);
}

async function bodyOf<T>(request: Request): Promise<T> {
  return ((await optionalBody<T>(request)) ?? {}) as T;
}

async function optionalBody<T>(request: Request): Promise<T | undefined> {
  const text = await request.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new LambdaApiError('InvalidRequestContentException', 'Could not parse request body into json', { cause: error });
  }
}

/** A JSON body with every Date as epoch seconds, as restJson1 timestamps are by default. */
function json(body: unknown): Response {
  const text = JSON.stringify(body, function (this: Record<string, unknown>, key, value) {
    const raw = this[key];
    return raw instanceof Date ? raw.getTime() / 1000 : value;
  });
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
}
