/** What the Events extension's DynamoDB adapters share: their error type and how they call the SDK. */

/** A DynamoDB call of the Events adapters failed for a reason other than a condition; `cause` holds the SDK error. */
export class EventStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventStoreError';
  }
}

/** Whether an SDK error is a failed condition (an answer, not a failure). */
function conditionFailed(error: unknown): boolean {
  return (error as { name?: unknown } | undefined)?.name === 'ConditionalCheckFailedException';
}

/** Runs one SDK call; a failed condition is rethrown as it is, anything else as an EventStoreError naming the call. */
export async function sendOrThrow<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (conditionFailed(error)) throw error;
    throw new EventStoreError(`${operation} failed: ${error instanceof Error ? error.name : 'unknown error'}`, { cause: error });
  }
}

/** Runs one conditional write: true when it was written, false when its condition failed; any other failure as `sendOrThrow`. */
export async function writeIfCondition(operation: string, call: () => Promise<unknown>): Promise<boolean> {
  try {
    await sendOrThrow(operation, call);
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

/** Keys join owner and id with '#', so an owner id holding one would be ambiguous. */
export function checkOwner(ownerId: string): void {
  if (ownerId === '' || ownerId.includes('#')) throw new RangeError('An owner id must be non-empty and must not contain "#"');
}
