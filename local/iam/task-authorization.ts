/**
 * The IAM check of a Step Functions Task: the state machine's role, as a session Step Functions
 * assumes, must be allowed every action the Task's integration performs. A refusal is the task
 * error AWS reports, so a Catch on it matches and the execution history reads as in AWS.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { assumedRole, roleNameOf, type IamAuthority } from './iam-authority.ts';
import { integrationActions } from './integration-action.ts';

/** A Task failure as the execution records it. */
export interface TaskAccessDenied {
  error: string;
  cause: string;
}

/** The SDK's service names in SDK integration errors, where they differ from the ARN's. */
const SDK_SERVICE: Record<string, string> = {
  dynamodb: 'DynamoDb',
  sfn: 'Sfn',
  s3: 'S3',
  sqs: 'Sqs',
  sns: 'Sns',
  secretsmanager: 'SecretsManager',
  eventbridge: 'EventBridge',
  lambda: 'Lambda',
};
/** Optimized integrations report the Java SDK v1 service exception. */
const OPTIMIZED_ERROR: Record<string, [string, string]> = {
  dynamodb: ['DynamoDB.AmazonDynamoDBException', 'AmazonDynamoDBv2'],
  sns: ['SNS.AmazonSNSException', 'AmazonSNS'],
  sqs: ['SQS.AmazonSQSException', 'AmazonSQS'],
  events: ['EventBridge.AmazonEventBridgeException', 'AmazonEventBridge'],
  states: ['StepFunctions.AWSStepFunctionsException', 'AWSStepFunctions'],
  lambda: ['Lambda.AWSLambdaException', 'AWSLambda'],
};

/** The sessions Step Functions assumes a role as: one per role here, 32 random letters as in AWS. */
const sessions = new WeakMap<IamAuthority, Map<string, string>>();

/** The assumed-role ARN a state machine's calls are made as. */
export function stateMachineSession(authority: IamAuthority, roleArn: string): string {
  let byRole = sessions.get(authority);
  if (!byRole) {
    byRole = new Map();
    sessions.set(authority, byRole);
  }
  let session = byRole.get(roleArn);
  if (!session) {
    const letters = [...randomBytes(32)].map((b) => String.fromCharCode((b % 26) + (b & 0x80 ? 65 : 97))).join('');
    session = assumedRole(authority.accountId, roleNameOf(roleArn) ?? roleArn, letters);
    byRole.set(roleArn, session);
  }
  return session;
}

/**
 * Authorizes a Task of a machine whose role is `roleArn`: undefined when every action is allowed,
 * else the error and cause AWS records (e.g. `Lambda.AWSLambdaException`, "User: ... is not
 * authorized to perform: lambda:InvokeFunction ... (Service: AWSLambda; Status Code: 403; ...)").
 */
export async function authorizeTask(
  authority: IamAuthority,
  task: { roleArn: string; resource: string; parameters: unknown },
): Promise<TaskAccessDenied | undefined> {
  const principalArn = stateMachineSession(authority, task.roleArn);
  const scope = { region: authority.region, accountId: authority.accountId };
  for (const { action, resource, context } of integrationActions(task.resource, task.parameters, scope)) {
    const decision = await authority.authorize({ principalArn, action, resource, ...(context ? { context } : {}) });
    if (decision.allowed) continue;
    const [error, service, status] = errorNames(task.resource);
    return {
      error,
      cause: `${decision.message} (Service: ${service}; Status Code: ${status}; Error Code: AccessDeniedException; Request ID: ${randomUUID()}; Proxy: null)`,
    };
  }
  return undefined;
}

/** [error name, service name in the cause, HTTP status] for a Task Resource. */
function errorNames(resource: string): [string, string, number] {
  if (/^arn:[a-z-]+:lambda:/.test(resource)) return ['Lambda.AWSLambdaException', 'AWSLambda', 403];
  const match = /^arn:[a-z-]+:states:::(aws-sdk:)?([a-zA-Z0-9-]+):/.exec(resource);
  const service = match?.[2] ?? '';
  if (match?.[1]) {
    // SDK integrations name errors `<Service>.<Exception>`; AccessDenied is modelled by few
    // services, so it surfaces as the service's base exception.
    const name = SDK_SERVICE[service] ?? service.charAt(0).toUpperCase() + service.slice(1);
    return [`${name}.${name}Exception`, name, service === 'dynamodb' || service === 'sfn' ? 400 : 403];
  }
  const [error, cause] = OPTIMIZED_ERROR[service] ?? [`States.TaskFailed`, service];
  return [error, cause, service === 'lambda' || service === 'sns' || service === 'sqs' ? 403 : 400];
}
