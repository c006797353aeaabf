/**
 * A question to the client mid-run, as the built-in request_input worker asks it for a state
 * machine (lambdas/workers/request-input-worker.ts): a durable callback waits where a
 * `.waitForTaskToken` state would, its id is the question's task token, and the core stores
 * the question with the operation until the client's answer completes the callback.
 */
import { createRetryStrategy, type DurableContext, type Duration, JitterStrategy } from '@aws/durable-execution-sdk-js';
import { deployedMetrics, deployedOperations } from '../app/deployed-operations.ts';
import { durableTaskToken } from '../aws/routing-workflow-engine.ts';
import { INPUT_ERRORS, InputRequestRefused } from '../operations/input-requests.ts';
import { operationsInScope } from '../workers/built-in-scope.ts';
import { DurableToolError } from './durable-tool-error.ts';
import { executionNameOf, operationKeyOf, type ToolEvent } from './tool-event.ts';

/** A server-to-client request, as a request_input state sends it: `elicitation/create`, `sampling/createMessage` or `roots/list`. */
export interface ClientRequest {
  method: string;
  params?: Record<string, unknown>;
}

export interface AskClientOptions {
  /** How long the question waits for its answer; it is stored as the question's deadline. Without one it waits as long as the execution may run. */
  timeout?: Duration;
  /** The key the question is pending under (a used one gets a `-N` suffix; none gets a minted key). */
  key?: string;
  /** The callback's name in the execution's history; defaults to the key, else `ask-client`. */
  name?: string;
}

/** The error names `askClient` rejects with when the client does not answer (declined, error) or the question is not asked. */
export { INPUT_ERRORS };

/**
 * Asks the client `request` and waits (suspended, for as long as `timeout`) for its answer:
 * an elicitation's ElicitResult (`{ action: 'accept', content }`), a sampling result or a
 * roots list. A question that is refused (the client lacks the capability, the operation is
 * over, the request is not one) or not answered (declined or cancelled elicitation, an error
 * response) rejects with a {@link DurableToolError} named as the worker's Catch would see
 * it (`Mcp.CapabilityMissing`, `Mcp.InputDeclined`, …, see {@link INPUT_ERRORS}), whose
 * `cause` the state's Cause would be; uncaught, it fails the execution with that name. A
 * timeout rejects with the SDK's `CallbackTimeoutError`.
 */
export async function askClient<Answer = unknown>(
  context: DurableContext,
  event: ToolEvent<unknown>,
  request: ClientRequest,
  options: AskClientOptions = {},
): Promise<Answer> {
  const name = options.name ?? options.key ?? 'ask-client';
  const timeoutMs = options.timeout === undefined ? undefined : millisecondsOf(options.timeout);
  // createCallback and a step rather than waitForCallback: waitForCallback checkpoints its
  // failure as its own CallbackExternalError, so the Mcp.* name an answer fails it with is
  // gone by the time the handler sees it; a bare callback keeps it on every replay.
  const [answer, callbackId] = await context.createCallback<Answer>(name, {
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    serdes: JSON_ANSWER,
  });
  const asked = await context.step(
    `${name}-ask`,
    async () => {
      const operation = operationKeyOf(event);
      try {
        const { key } = await operationsInScope(deployedOperations).inputs.ask({
          taskToken: durableTaskToken(callbackId),
          request,
          executionName: executionNameOf(context),
          ...(operation ? { operation } : {}),
          ...(options.key === undefined ? {} : { key: options.key }),
          ...(timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs }),
        });
        return { key } as AskOutcome;
      } catch (error) {
        // A refusal is the tool's to handle, so it is the step's result (a thrown error would
        // be retried and lose its name); anything else (the store unreachable, the question's
        // event not recorded) is retried, and the retried ask finds the question it stored.
        if (error instanceof InputRequestRefused) return { refused: { name: error.errorName, message: error.message } } as AskOutcome;
        throw error;
      } finally {
        deployedMetrics.flush();
      }
    },
    { retryStrategy: ASK_RETRY },
  );
  if ('refused' in asked) throw new DurableToolError(asked.refused.name, asked.refused.message);
  try {
    return (await answer) as Answer;
  } catch (error) {
    throw unanswered(error) ?? error;
  }
}

/**
 * The ask step's retries, as a request_input state retries Mcp.AskFailed: a throttled store or
 * event log is usually through within seconds, and asking again is idempotent (the callback id
 * is the task token, the same on every attempt), so the retried ask keeps its key.
 */
const ASK_RETRY = createRetryStrategy({
  maxAttempts: 10,
  initialDelay: { seconds: 1 },
  maxDelay: { seconds: 30 },
  backoffRate: 2,
  jitter: JitterStrategy.FULL,
});

type AskOutcome = { key: string } | { refused: { name: string; message: string } };

/** The callback's Result is the client's answer as JSON bytes (the durable engine's sendTaskSuccess). */
const JSON_ANSWER = {
  deserialize: async (data: string | undefined) => (data === undefined || data === '' ? undefined : JSON.parse(data)),
};

/**
 * An answer that failed the callback (SendDurableExecutionCallbackFailure with an Mcp.* error)
 * as the error a state's Catch would see; undefined for any other failure (a timeout).
 */
function unanswered(error: unknown): DurableToolError | undefined {
  if (!(error instanceof Error) || (error as { errorType?: unknown }).errorType !== 'CallbackExternalError') return undefined;
  const cause = error.cause;
  if (!(cause instanceof Error) || !cause.name.startsWith('Mcp.')) return undefined;
  return new DurableToolError(cause.name, cause.message);
}

function millisecondsOf(duration: Duration): number {
  const { days = 0, hours = 0, minutes = 0, seconds = 0 } = duration as { days?: number; hours?: number; minutes?: number; seconds?: number };
  return (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
}
