/**
 * Step Functions ARNs and names, in the formats the service uses:
 * `arn:aws:states:<region>:<account>:stateMachine:<machine>`,
 * `arn:aws:states:<region>:<account>:execution:<machine>:<name>` (STANDARD) and
 * `arn:aws:states:<region>:<account>:express:<machine>:<name>:<id>` (EXPRESS).
 */
import { SfnApiError } from './sfn-facade-errors.ts';

export interface ArnScope {
  region: string;
  accountId: string;
}

export type ParsedExecutionArn = { kind: 'execution'; machine: string; name: string } | { kind: 'express'; machine: string; name: string; id: string };

/** Names the facade accepts: stricter than AWS, so that every name also works in CloudWatch Logs. */
const NAME = /^[A-Za-z0-9_-]{1,80}$/;

export function stateMachineArn(scope: ArnScope, machine: string): string {
  return `${prefix(scope)}:stateMachine:${machine}`;
}

export function executionArn(scope: ArnScope, machine: string, name: string): string {
  return `${prefix(scope)}:execution:${machine}:${name}`;
}

export function expressExecutionArn(scope: ArnScope, machine: string, name: string, id: string): string {
  return `${prefix(scope)}:express:${machine}:${name}:${id}`;
}

/**
 * Throws InvalidName unless `name` is 1-80 characters of A-Z, a-z, 0-9, `-` and `_` (the
 * length itself is a model constraint, checked before this with the request).
 */
export function checkExecutionName(name: string): void {
  if (!NAME.test(name)) throw new SfnApiError('InvalidName', `Invalid Name: '${name.slice(0, 80)}'`);
}

/**
 * Checks the shape of a state machine ARN; throws InvalidArn when malformed.
 * A well-formed ARN of another region or account is not malformed: it names nothing here.
 */
export function parseStateMachineArn(arn: string): { machine: string } {
  const parts = resource(arn);
  if (parts?.[0] !== 'stateMachine' || parts.length !== 2 || !parts[1]) throw invalidArn(arn);
  return { machine: parts[1] };
}

/** Parses an execution ARN of either kind; throws InvalidArn when malformed. */
export function parseExecutionArn(arn: string): ParsedExecutionArn {
  const parts = resource(arn);
  if (parts?.[0] === 'execution' && parts.length === 3 && parts[1] && parts[2]) {
    return { kind: 'execution', machine: parts[1], name: parts[2] };
  }
  if (parts?.[0] === 'express' && parts.length === 4 && parts[1] && parts[2] && parts[3]) {
    return { kind: 'express', machine: parts[1], name: parts[2], id: parts[3] };
  }
  throw invalidArn(arn);
}

/** What the service answers for an Express execution ARN on the APIs that only serve STANDARD ones. */
export function expressNotSupported(): SfnApiError {
  return new SfnApiError('InvalidArn', "Invalid Arn: 'Resource type not valid in this context: express'");
}

function prefix(scope: ArnScope): string {
  return `arn:aws:states:${scope.region}:${scope.accountId}`;
}

/** The resource segments after `arn:aws:states:<region>:<account>:`, or undefined when malformed. */
function resource(arn: string): string[] | undefined {
  const match = /^arn:aws:states:[a-z0-9-]+:\d{12}:(.+)$/.exec(arn);
  return match?.[1]?.split(':');
}

function invalidArn(arn: string): SfnApiError {
  return new SfnApiError('InvalidArn', `Invalid Arn: '${arn.slice(0, 300)}'`);
}
