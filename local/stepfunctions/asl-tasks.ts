/**
 * What a Task state's resource is locally, and how one call of it runs: a worker placeholder
 * (`${Worker_<name>}`, called with the task's input), `arn:aws:states:::lambda:invoke` and
 * its `.waitForTaskToken` form with such a `FunctionName` (in Parameters or, in JSONata,
 * Arguments; the result carries `Payload`), or any other resource answered by a mock.
 * Worker failures are reported the way Lambda reports them (see lambda-function-error.ts).
 */
import { findWorkerPlaceholders, workerSubstitutionKey } from '../../lambdas/tools/worker-placeholders.ts';
import { lambdaFunctionError } from './lambda-function-error.ts';
import { TaskError } from './sfn-facade-errors.ts';
import type { TaskTokens } from './sfn-facade-task-tokens.ts';

export type WorkerHandler = (event: unknown) => Promise<unknown>;
/** Answers one call of a mocked Task; throws an error whose `name` is the Error and `message` the Cause. */
export type TaskMockHandler = (input: unknown) => Promise<unknown>;

/**
 * Answers for Tasks whose resource is neither a worker nor a Lambda invoke (the tool's mocks).
 * `handlerFor` is called once per state when the interpreter is created, to check that every
 * such state has an answer, and again once per state at the start of every execution, so a
 * handler can count the calls of one execution (attempt indexes such as "0" and "1-2").
 */
export interface TaskMocks {
  handlerFor(stateName: string): TaskMockHandler | undefined;
}

export type TaskKind =
  | { kind: 'direct'; worker: WorkerHandler }
  | { kind: 'invoke'; worker: WorkerHandler }
  | { kind: 'wait'; worker: WorkerHandler }
  | { kind: 'mock' };

/** One call: its input, its token, and the timeouts of this attempt. */
export interface TaskRun {
  input: unknown;
  takeToken: () => string;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
  /** Fail with States.Timeout after `timeoutSeconds` (false only for the tests' reference engine, which does that itself). */
  enforceTimeout: boolean;
}

export const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
export const LAMBDA_INVOKE_WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';

/** Classifies a Task; throws naming the state when it cannot run locally. */
export function classifyTask(
  stateName: string,
  state: Record<string, unknown>,
  workerFor: (name: string) => WorkerHandler,
  mocks: TaskMocks | undefined,
  /** A deployed definition names functions by ARN (or name): the handler that invokes one, if it runs locally. */
  functionFor?: (functionArnOrName: string) => WorkerHandler | undefined,
): TaskKind {
  const resource = String(state.Resource);
  const direct = placeholderWorker(resource);
  if (direct) return { kind: 'direct', worker: workerFor(direct) };
  const deployed = /^arn:aws:lambda:/.test(resource) ? functionFor?.(resource) : undefined;
  if (deployed) return { kind: 'direct', worker: deployed };
  if (resource === LAMBDA_INVOKE || resource === LAMBDA_INVOKE_WAIT) {
    const request = (state.Arguments ?? state.Parameters) as Record<string, unknown> | undefined;
    const field = state.Arguments !== undefined ? 'Arguments' : 'Parameters';
    const name = typeof request?.FunctionName === 'string' ? request.FunctionName : undefined;
    const worker = name === undefined ? undefined : placeholderWorker(name);
    const handler = worker ? workerFor(worker) : name === undefined ? undefined : functionFor?.(name);
    if (!handler) {
      throw new Error(`state "${stateName}" must name its function as ${field}.FunctionName "\${Worker_<name>}" to run locally`);
    }
    return { kind: resource === LAMBDA_INVOKE ? 'invoke' : 'wait', worker: handler };
  }
  if (mocks?.handlerFor(stateName)) return { kind: 'mock' };
  throw new Error(
    `state "${stateName}" uses Resource "${resource}", which the local runtime cannot call: ` +
      `add an entry for "${stateName}" to the tool's mocks.json, or use "\${Worker_<name>}" or ${LAMBDA_INVOKE}[.waitForTaskToken] with such a FunctionName`,
  );
}

/** Runs one call of a Task of kind `kind` (a mock's handler is `mock`). */
export async function runTask(kind: TaskKind, run: TaskRun, tokens: TaskTokens, mock?: TaskMockHandler): Promise<unknown> {
  if (kind.kind === 'wait') {
    const token = run.takeToken();
    const answered = tokens.wait(token, { heartbeatSeconds: run.heartbeatSeconds, timeoutSeconds: run.timeoutSeconds });
    const payload = (run.input as { Payload?: unknown } | null)?.Payload ?? {};
    const invoked = invokeWorker(kind.worker, payload).then(
      () => answered,
      (error: unknown) => {
        tokens.cancel(token);
        throw error;
      },
    );
    // The answer may arrive while the worker is still running, as it can in AWS.
    return withTimeout(Promise.race([answered, invoked]), run.enforceTimeout ? run.timeoutSeconds : undefined);
  }
  run.takeToken();
  return withTimeout(callOnce(kind, run.input, mock), run.enforceTimeout ? run.timeoutSeconds : undefined);
}

async function callOnce(kind: TaskKind, input: unknown, mock: TaskMockHandler | undefined): Promise<unknown> {
  switch (kind.kind) {
    case 'direct':
      return invokeWorker(kind.worker, input);
    case 'invoke': {
      const result = await invokeWorker(kind.worker, (input as { Payload?: unknown } | null)?.Payload ?? {});
      return { ExecutedVersion: '$LATEST', Payload: result, StatusCode: 200 };
    }
    default: {
      if (!mock) throw new TaskError('States.Runtime', 'this Task has no mocked response for this execution');
      const result = await mock(jsonCopy(input));
      return jsonCopy(result);
    }
  }
}

/** Calls a worker across a JSON boundary, as a Lambda invocation would. */
export async function invokeWorker(worker: WorkerHandler, event: unknown): Promise<unknown> {
  try {
    return jsonCopy(await worker(jsonCopy(event)));
  } catch (error) {
    // A TaskError is the invoke's own failure (a deployed function's error payload, an access denial), already shaped.
    throw error instanceof TaskError ? error : lambdaFunctionError(error);
  }
}

function jsonCopy(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}

function withTimeout<T>(work: Promise<T>, seconds: number | undefined): Promise<T> {
  if (seconds === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TaskError('States.Timeout', 'The task timed out')), Math.min(2_147_483_647, seconds * 1000));
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The worker name when `value` is exactly one `${Worker_<name>}` placeholder. */
export function placeholderWorker(value: string): string | undefined {
  const [worker, ...others] = findWorkerPlaceholders(value);
  return worker && others.length === 0 && value === `\${${workerSubstitutionKey(worker)}}` ? worker : undefined;
}
