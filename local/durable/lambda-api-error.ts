/**
 * The Lambda API's errors as the restJson1 protocol carries them: the HTTP status, the
 * `x-amzn-ErrorType` header and a `{ Type, Message }` body, which is what lets the unmodified
 * `@aws-sdk/client-lambda` raise its typed exceptions (`ResourceNotFoundException`, ...).
 * The status and the message member (`Message` on some errors, `message` on others) are read
 * from the client's own model of Lambda, so the local service cannot answer otherwise.
 */
import * as lambdaModel from '@aws-sdk/client-lambda';

/** Every error the local service answers with. */
export const LAMBDA_ERROR_NAMES = [
  'CallbackTimeoutException',
  'DurableExecutionAlreadyStartedException',
  'InvalidParameterValueException',
  'InvalidRequestContentException',
  'ResourceNotFoundException',
  'ServiceException',
] as const;

export type LambdaErrorName = (typeof LAMBDA_ERROR_NAMES)[number];

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

  /** The wire response, as Lambda's model shapes this error. */
  toResponse(): Response {
    const { status, fault, messageMember } = lambdaErrorModel(this.type);
    return new Response(JSON.stringify({ Type: fault === 'server' ? 'Service' : 'User', [messageMember]: this.message }), {
      status,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': this.type },
    });
  }
}

/** What Lambda's model says of an error: its HTTP status, whose fault it is and the member its message goes in. */
export function lambdaErrorModel(type: LambdaErrorName): { status: number; fault: 'client' | 'server'; messageMember: 'Message' | 'message' } {
  // The client's error schema: [kind, namespace, name, { error, httpError }, member names, member types].
  const schema = (lambdaModel as unknown as Record<string, unknown>)[`${type}$`];
  const [, , name, traits, members] = Array.isArray(schema) ? (schema as unknown[]) : [];
  const { error, httpError } = (traits ?? {}) as { error?: unknown; httpError?: unknown };
  const messageMember = Array.isArray(members) ? members.find((member) => member === 'Message' || member === 'message') : undefined;
  if (name !== type || (error !== 'client' && error !== 'server') || typeof httpError !== 'number' || !messageMember) {
    throw new Error(`@aws-sdk/client-lambda has no model of ${type} this service can read`);
  }
  return { status: httpError, fault: error, messageMember };
}
