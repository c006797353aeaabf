/**
 * Validates a worker's event. The server already checked the tool arguments against
 * the inputSchema, so a failure here means the definition passes the wrong shape;
 * the error's name makes that visible as the execution's Error.
 */
import * as z from 'zod';

/** Thrown when a worker's event does not match its schema. */
export class InvalidWorkerInputError extends Error {
  constructor(worker: string, error: z.ZodError) {
    super(`${worker}: invalid input: ${z.prettifyError(error)}`, { cause: error });
    this.name = 'InvalidWorkerInput';
  }
}

/** `event` parsed with `schema`, or an {@link InvalidWorkerInputError} naming `worker`. */
export function parseWorkerInput<T extends z.ZodType>(worker: string, schema: T, event: unknown): z.infer<T> {
  const parsed = schema.safeParse(event);
  if (!parsed.success) throw new InvalidWorkerInputError(worker, parsed.error);
  return parsed.data;
}
