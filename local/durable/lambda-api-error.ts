/**
 * The Lambda API's errors as the restJson1 protocol carries them: the HTTP status, the
 * `x-amzn-ErrorType` header and a `{ Type, Message }` body, which is what lets the unmodified
 * `@aws-sdk/client-lambda` raise its typed exceptions (`ResourceNotFoundException`, ...).
 */

export type LambdaErrorName =
  | 'DurableExecutionAlreadyStartedException'
  | 'InvalidParameterValueException'
  | 'InvalidRequestContentException'
  | 'ResourceConflictException'
  | 'ResourceNotFoundException'
  | 'ServiceException';

const STATUS_OF: Record<LambdaErrorName, number> = {
  DurableExecutionAlreadyStartedException: 409,
  InvalidParameterValueException: 400,
  InvalidRequestContentException: 400,
  ResourceConflictException: 409,
  ResourceNotFoundException: 404,
  ServiceException: 500,
};

/** An error the service answers with, named as Lambda names it. */
export class LambdaApiError extends Error {
  constructor(
    readonly type: LambdaErrorName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LambdaApiError';
  }

  /** The wire response: Lambda's members are `Message` on some errors, `message` on others. */
  toResponse(): Response {
    const fault = this.type === 'ServiceException' ? 'Service' : 'User';
    return new Response(JSON.stringify({ Type: fault, Message: this.message, message: this.message }), {
      status: STATUS_OF[this.type],
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': this.type },
    });
  }
}
