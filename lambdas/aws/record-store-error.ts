/**
 * How the DynamoDB store's calls fail: a failed condition is an answer the caller reads
 * (`isConditionFailure`), DynamoDB's size refusals become the port's typed errors, and any
 * other failure a {@link RecordStoreError} that keeps the SDK error as its cause.
 */
import { RecordTooLargeError } from '../operations/ports.ts';
import { KeyTooLongError } from './dynamodb-limits.ts';

/** A DynamoDB call failed for a reason other than a condition; `cause` holds the SDK error. */
export class RecordStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RecordStoreError';
  }
}

/** Whether a conditional write was refused by its condition (no error: an answer). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The typed error for a failed DynamoDB call: a size refusal as the port names it, else a RecordStoreError. */
export function storeError(operation: string, error: unknown): Error {
  if (error instanceof Error && error.name === 'ValidationException') {
    if (/item size.*exceeded the maximum allowed size/i.test(error.message)) return new RecordTooLargeError({ cause: error });
    if (/size of hashkey has exceeded|size of all range keys has exceeded/i.test(error.message)) {
      return new KeyTooLongError({ cause: error });
    }
  }
  // The SDK error's name only: its message may quote key values.
  const reason = error instanceof Error ? error.name : 'unknown error';
  return new RecordStoreError(`DynamoDB ${operation} failed: ${reason}`, { cause: error });
}

/** Runs a call whose every failure is a store error (one with no condition to fail). */
export async function storeCall<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storeError(operation, error);
  }
}
