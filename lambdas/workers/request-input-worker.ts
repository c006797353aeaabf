/**
 * The built-in request-input worker: a `.waitForTaskToken` Task state calls it with
 * `{ taskToken, request, key? }` (plus `executionName`, and `operation` when the execution's
 * input names it, which the tool loader adds to the state's payload). It stores the question
 * with the operation and returns at once; the state then waits until the client's answer
 * resumes it (SendTaskSuccess) or refuses (SendTaskFailure). A question that cannot be asked
 * fails the state with an `Mcp.*` error its Catch can handle.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as z from 'zod';
import { InputRequestRefused, INPUT_ERRORS, type InputRequests } from '../operations/input-requests.ts';

/** The payload the Task state passes (its own fields, and those the loader adds). */
const RequestInputEvent = z.looseObject({
  taskToken: z.string().min(1),
  request: z.unknown(),
  key: z.string().optional(),
  executionName: z.string().min(1),
  operation: z.object({ ownerId: z.string().min(1), token: z.string().min(1) }).optional(),
});

/** An error whose name Step Functions shows as the state's Error (the Lambda runtime reports `name` as errorType). */
export class WorkerError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

const scoped = new AsyncLocalStorage<InputRequests>();

/** Runs `fn` with `inputs` as the worker's core (the local runtime runs workers in-process this way). */
export function withInputRequests<T>(inputs: InputRequests, fn: () => T): T {
  return scoped.run(inputs, fn);
}

/**
 * The worker's handler over `fallback` (the deployed core, built from the environment on
 * first use). Returns the key the question is pending under.
 */
export function createRequestInputHandler(fallback: () => InputRequests) {
  return async (event: unknown): Promise<{ key: string }> => {
    const parsed = RequestInputEvent.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new WorkerError(INPUT_ERRORS.invalidRequest, `Invalid request-input payload: ${issue.path.join('.') || 'payload'} ${issue.message}`);
    }
    const { taskToken, request, key, executionName, operation } = parsed.data;
    const inputs = scoped.getStore() ?? fallback();
    try {
      const asked = await inputs.ask({ taskToken, request, executionName, ...(key === undefined ? {} : { key }), ...(operation ? { operation } : {}) });
      return { key: asked.key };
    } catch (error) {
      if (error instanceof InputRequestRefused) throw new WorkerError(error.errorName, error.message);
      throw error;
    }
  };
}
