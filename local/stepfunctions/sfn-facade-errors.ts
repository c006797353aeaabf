/**
 * The facade's two error families: `SfnApiError`, an API error that the protocol module
 * encodes once as `{"__type", "message"}` with HTTP 400 (which is what lets the unmodified
 * SDK raise its typed exceptions), and `TaskError`, a States error raised inside an execution.
 */

export type SfnErrorName =
  | 'ExecutionAlreadyExists'
  | 'ExecutionDoesNotExist'
  | 'InvalidArn'
  | 'InvalidExecutionInput'
  | 'InvalidName'
  | 'InvalidOutput'
  | 'InvalidToken'
  | 'SerializationException'
  | 'StateMachineDoesNotExist'
  | 'StateMachineTypeNotSupported'
  | 'TaskDoesNotExist'
  | 'TaskTimedOut'
  | 'UnknownOperationException'
  | 'ValidationException';

export class SfnApiError extends Error {
  constructor(
    readonly type: SfnErrorName,
    message: string,
  ) {
    super(message);
    this.name = 'SfnApiError';
  }
}

/**
 * A failure raised inside an execution. The interpreter matches Retry and Catch on
 * `name` and reports `message` as the cause, so these carry the States error name and cause.
 */
export class TaskError extends Error {
  constructor(error: string, cause: string) {
    super(cause);
    this.name = error;
  }
}
