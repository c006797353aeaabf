/**
 * The built-in request-input worker: a `.waitForTaskToken` Task state calls it with
 * `{ taskToken, request, key? }` (plus `executionName`, and `operation` when the execution's
 * input names it, which the tool loader adds to the state's payload). It stores the question
 * with the operation and returns at once; the state then waits until the client's answer
 * resumes it (SendTaskSuccess) or refuses (SendTaskFailure). A question that cannot be asked
 * fails the state with an `Mcp.*` error its Catch can handle.
 *
 * The loader also adds `asking`: when the state was entered and its TimeoutSeconds and
 * HeartbeatSeconds, from which the question's deadline is stored (a timed-out wait sends no
 * event), and whether other states of the execution run beside it.
 *
 * Any other failure (the store, or the question's event, not written) fails the state with
 * `Mcp.AskFailed`, which the loader makes the state retry with backoff: the retried attempt
 * takes over the question its failed attempt may have stored (same key, its new task token;
 * in a Parallel or Map, the one its branch or iteration stored, by the state's entry time)
 * and records the event again, so the run waits for its answer instead of failing. An answer
 * the client gave in between was kept on the question: the retried attempt is resumed with it.
 */
import * as z from 'zod';
import { inputDeadline, InputRequestRefused, INPUT_ERRORS } from '../operations/input-requests.ts';
import type { OperationsService } from '../operations/operations-service.ts';
import { operationsInScope, WorkerError } from './built-in-scope.ts';

/** The payload the Task state passes (its own fields, and those the loader adds). */
const RequestInputEvent = z.looseObject({
  taskToken: z.string().min(1),
  request: z.unknown(),
  key: z.string().optional(),
  executionName: z.string().min(1),
  operation: z.object({ ownerId: z.string().min(1), token: z.string().min(1) }).optional(),
  // Absent in definitions loaded before the loader added it: the question then has no deadline.
  // Read leniently: a field it cannot use only costs the deadline, never the question.
  asking: z
    .looseObject({
      enteredTime: z.unknown().optional(),
      retryCount: z.unknown().optional(),
      timeoutSeconds: z.unknown().optional(),
      heartbeatSeconds: z.unknown().optional(),
      concurrent: z.unknown().optional(),
      stateName: z.unknown().optional(),
    })
    .optional(),
});

/**
 * When this attempt of the state began: its `$$.State.EnteredTime` on the first attempt, now
 * on a retry (which keeps the first attempt's EnteredTime) or when it is missing or unreadable.
 */
function attemptStart(enteredTime: unknown, retryCount: unknown): number {
  const retried = typeof retryCount === 'number' && retryCount > 0;
  return (retried ? undefined : enteredAt(enteredTime)) ?? Date.now();
}

/** When the state was entered (epoch ms): the same for every retried attempt, so it names the branch's or iteration's question. */
function enteredAt(enteredTime: unknown): number | undefined {
  const parsed = typeof enteredTime === 'string' ? Date.parse(enteredTime) : Number.NaN;
  return Number.isFinite(parsed) ? parsed : undefined;
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

const seconds = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * The worker's handler over `fallback` (the deployed core, built from the environment on
 * first use). Returns the key the question is pending under.
 */
export function createRequestInputHandler(fallback: () => OperationsService) {
  return async (event: unknown): Promise<{ key: string }> => {
    const parsed = RequestInputEvent.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new WorkerError(
        INPUT_ERRORS.invalidRequest,
        `Invalid request-input payload: ${issue?.path.join('.') || 'payload'} ${issue?.message ?? 'is invalid'}`,
      );
    }
    const { taskToken, request, key, executionName, operation, asking } = parsed.data;
    const { inputs } = operationsInScope(fallback);
    const entered = enteredAt(asking?.enteredTime);
    const deadline = asking
      ? inputDeadline(attemptStart(asking.enteredTime, asking.retryCount), seconds(asking.timeoutSeconds), seconds(asking.heartbeatSeconds))
      : undefined;
    try {
      const asked = await inputs.ask({
        taskToken,
        request,
        executionName,
        ...(key === undefined ? {} : { key }),
        ...(operation ? { operation } : {}),
        ...(deadline === undefined ? {} : { deadline }),
        ...(typeof asking?.concurrent === 'boolean' ? { concurrent: asking.concurrent } : {}),
        ...(typeof asking?.stateName === 'string' ? { state: asking.stateName } : {}),
        ...(typeof asking?.retryCount === 'number' && asking.retryCount > 0 ? { retried: true } : {}),
        ...(entered === undefined ? {} : { enteredAt: entered }),
      });
      return { key: asked.key };
    } catch (error) {
      if (error instanceof InputRequestRefused) throw new WorkerError(error.errorName, error.message);
      // Already logged where it failed (the record store, the event recorder), with names only.
      throw new WorkerError(INPUT_ERRORS.askFailed, `The question was not recorded: ${errorName(error)}; asking again is safe`);
    }
  };
}
