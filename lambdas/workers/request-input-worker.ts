/**
 * The built-in request-input worker: a `.waitForTaskToken` Task state calls it with
 * `{ taskToken, request, key? }` (plus `executionName`, and `operation` when the execution's
 * input names it, which the tool loader adds to the state's payload). It stores the question
 * with the operation and returns at once; the state then waits until the client's answer
 * resumes it (SendTaskSuccess) or refuses (SendTaskFailure). A question that cannot be asked
 * fails the state with an `Mcp.*` error its Catch can handle.
 */
import * as z from 'zod';
import { InputRequestRefused, INPUT_ERRORS } from '../operations/input-requests.ts';
import type { OperationsService } from '../operations/operations-service.ts';
import { operationsInScope, WorkerError } from './built-in-scope.ts';

/** The payload the Task state passes (its own fields, and those the loader adds). */
const RequestInputEvent = z.looseObject({
  taskToken: z.string().min(1),
  request: z.unknown(),
  key: z.string().optional(),
  executionName: z.string().min(1),
  operation: z.object({ ownerId: z.string().min(1), token: z.string().min(1) }).optional(),
});

/**
 * The worker's handler over `fallback` (the deployed core, built from the environment on
 * first use). Returns the key the question is pending under.
 */
export function createRequestInputHandler(fallback: () => OperationsService) {
  return async (event: unknown): Promise<{ key: string }> => {
    const parsed = RequestInputEvent.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new WorkerError(INPUT_ERRORS.invalidRequest, `Invalid request-input payload: ${issue.path.join('.') || 'payload'} ${issue.message}`);
    }
    const { taskToken, request, key, executionName, operation } = parsed.data;
    const { inputs } = operationsInScope(fallback);
    try {
      const asked = await inputs.ask({ taskToken, request, executionName, ...(key === undefined ? {} : { key }), ...(operation ? { operation } : {}) });
      return { key: asked.key };
    } catch (error) {
      if (error instanceof InputRequestRefused) throw new WorkerError(error.errorName, error.message);
      throw error;
    }
  };
}
