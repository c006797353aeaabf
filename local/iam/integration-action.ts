/**
 * What IAM authorizes when a Step Functions Task state calls a service with the state machine's
 * role: from the Task's `Resource` and its resolved `Parameters` (or JSONata `Arguments`), the
 * action and resource ARN(s) the service checks.
 */
import { dynamodbActions, s3Actions, secretsManagerActions, stepFunctionsActions, tableArn, type RequestAction } from './request-actions.ts';

export interface IntegrationScope {
  region: string;
  accountId: string;
}

/** SDK integration service names (the SDK client's name) whose IAM prefix differs. */
const IAM_PREFIX: Record<string, string> = {
  sfn: 'states',
  cloudwatchlogs: 'logs',
  eventbridge: 'events',
  elasticloadbalancingv2: 'elasticloadbalancing',
  efs: 'elasticfilesystem',
  sesv2: 'ses',
  apigatewayv2: 'apigateway',
  apigatewaymanagementapi: 'execute-api',
  mediastoredata: 'mediastore',
};

/** The optimized integrations' actions (`arn:aws:states:::<service>:<action>`), as IAM names them. */
const OPTIMIZED: Record<string, string> = {
  'dynamodb:putItem': 'dynamodb:PutItem',
  'dynamodb:getItem': 'dynamodb:GetItem',
  'dynamodb:updateItem': 'dynamodb:UpdateItem',
  'dynamodb:deleteItem': 'dynamodb:DeleteItem',
  'sns:publish': 'sns:Publish',
  'sqs:sendMessage': 'sqs:SendMessage',
  'events:putEvents': 'events:PutEvents',
  'states:startExecution': 'states:StartExecution',
  'lambda:invoke': 'lambda:InvokeFunction',
};

/**
 * The actions a Task performs, or an empty list for a Resource that calls no AWS service (an
 * activity, `http:invoke` is authorized as `states:InvokeHTTPEndpoint` on the machine and is not
 * handled here). Throws for a Resource this runtime does not recognise.
 */
export function integrationActions(resource: string, parameters: unknown, scope: IntegrationScope): RequestAction[] {
  const params = asObject(parameters);
  // A bare function ARN as Resource: the legacy Lambda integration.
  if (/^arn:[a-z-]+:lambda:/.test(resource)) return [{ action: 'lambda:InvokeFunction', resource: functionArn(resource, undefined, scope) }];
  const match = /^arn:[a-z-]+:states:::(aws-sdk:)?([a-zA-Z0-9-]+):([a-zA-Z0-9]+)(?:\.(?:waitForTaskToken|sync(?::2)?))?$/.exec(resource);
  if (!match) {
    if (/^arn:[a-z-]+:states:[a-z0-9-]+:\d{12}:activity:/.test(resource)) return [];
    throw new Error(`Task Resource "${resource}" is not a service integration`);
  }
  const [, sdk, service, apiAction] = match as unknown as [string, string | undefined, string, string];
  if (!sdk) {
    const action = OPTIMIZED[`${service}:${apiAction}`];
    if (!action) throw new Error(`Task Resource "${resource}" is not an optimized integration this runtime knows`);
    return optimizedActions(action, params, scope);
  }
  return sdkActions(service, apiAction, params, scope);
}

function optimizedActions(action: string, params: Record<string, unknown>, scope: IntegrationScope): RequestAction[] {
  switch (action) {
    case 'lambda:InvokeFunction':
      return [{ action, resource: functionArn(requiredString(params, 'FunctionName'), optionalString(params, 'Qualifier'), scope) }];
    case 'sns:Publish':
      return [{ action, resource: optionalString(params, 'TopicArn') ?? requiredString(params, 'TargetArn') }];
    case 'sqs:SendMessage':
      return [{ action, resource: queueArn(requiredString(params, 'QueueUrl'), scope) }];
    case 'events:PutEvents':
      return eventBusArns(params, scope).map((bus) => ({ action, resource: bus }));
    case 'states:StartExecution':
      return [{ action, resource: requiredString(params, 'StateMachineArn') }];
    default:
      return [{ action, resource: tableArn(requiredString(params, 'TableName'), scope) }];
  }
}

/** `arn:aws:states:::aws-sdk:<service>:<apiAction>`: the IAM action is `<prefix>:<ApiAction>`. */
function sdkActions(service: string, apiAction: string, params: Record<string, unknown>, scope: IntegrationScope): RequestAction[] {
  const prefix = IAM_PREFIX[service] ?? service;
  const operation = apiAction.charAt(0).toUpperCase() + apiAction.slice(1);
  const action = `${prefix}:${operation}`;
  const actionScope = { ...scope };
  // SDK integrations take the API's own request shape (PascalCase members).
  switch (prefix) {
    case 'dynamodb':
      return dynamodbActions(operation, params, actionScope);
    case 'states':
      return stepFunctionsActions(operation, camelKeys(params), actionScope);
    case 'secretsmanager':
      return secretsManagerActions(operation, params, actionScope);
    case 's3':
      return s3SdkActions(operation, params);
    case 'lambda':
      if (typeof params.FunctionName === 'string') {
        return [
          {
            action: operation === 'Invoke' ? 'lambda:InvokeFunction' : action,
            resource: functionArn(params.FunctionName, optionalString(params, 'Qualifier'), scope),
          },
        ];
      }
      return [{ action, resource: '*' }];
    case 'sqs':
      return [{ action, resource: typeof params.QueueUrl === 'string' ? queueArn(params.QueueUrl, scope) : '*' }];
    case 'sns':
      return [{ action, resource: optionalString(params, 'TopicArn') ?? optionalString(params, 'TargetArn') ?? '*' }];
    case 'events':
      return operation === 'PutEvents' ? eventBusArns(params, scope).map((bus) => ({ action, resource: bus })) : [{ action, resource: '*' }];
    default:
      return [{ action, resource: '*' }];
  }
}

/** S3 SDK operations, through the REST mapping so both agree. */
function s3SdkActions(operation: string, params: Record<string, unknown>): RequestAction[] {
  const bucket = requiredString(params, 'Bucket');
  const key = optionalString(params, 'Key');
  const verbs: Record<string, [string, string?]> = {
    GetObject: ['GET'],
    HeadObject: ['HEAD'],
    PutObject: ['PUT'],
    CopyObject: ['PUT'],
    DeleteObject: ['DELETE'],
    ListObjectsV2: ['GET', 'list-type=2'],
    ListObjects: ['GET'],
    HeadBucket: ['HEAD'],
    GetObjectTagging: ['GET', 'tagging'],
    PutObjectTagging: ['PUT', 'tagging'],
  };
  const verb = verbs[operation];
  if (!verb) return [{ action: `s3:${operation}`, resource: key ? `arn:aws:s3:::${bucket}/${key}` : `arn:aws:s3:::${bucket}` }];
  const query = new URLSearchParams(verb[1] ?? '');
  if (typeof params.Prefix === 'string') query.set('prefix', params.Prefix);
  const headers: Record<string, string> = { host: 's3.amazonaws.com' };
  if (operation === 'CopyObject') headers['x-amz-copy-source'] = requiredString(params, 'CopySource');
  const path = `/${encodeURIComponent(bucket)}${key ? `/${key.split('/').map(encodeURIComponent).join('/')}` : ''}`;
  return s3Actions({ method: verb[0], path, query, headers });
}

/** A function ARN from a FunctionName (name, `name:qualifier`, partial or full ARN) and a Qualifier. */
export function functionArn(functionName: string, qualifier: string | undefined, scope: IntegrationScope): string {
  let arn: string;
  if (functionName.startsWith('arn:')) arn = functionName;
  else if (/^\d{12}:function:/.test(functionName)) arn = `arn:aws:lambda:${scope.region}:${functionName}`;
  else arn = `arn:aws:lambda:${scope.region}:${scope.accountId}:function:${functionName}`;
  // A qualified ARN is authorized as itself; grants reach it through `function:<name>:*`.
  return qualifier && arn.split(':').length === 7 ? `${arn}:${qualifier}` : arn;
}

/** `https://sqs.<region>.amazonaws.com/<account>/<name>` (or any host) -> `arn:aws:sqs:<region>:<account>:<name>`. */
export function queueArn(queueUrl: string, scope: IntegrationScope): string {
  const match = /^https?:\/\/[^/]+\/(\d{12})\/([^/?]+)/.exec(queueUrl);
  if (!match) return queueUrl.startsWith('arn:') ? queueUrl : '*';
  const region = /sqs\.([a-z0-9-]+)\.amazonaws\.com/.exec(queueUrl)?.[1] ?? scope.region;
  return `arn:aws:sqs:${region}:${match[1]}:${match[2]}`;
}

function eventBusArns(params: Record<string, unknown>, scope: IntegrationScope): string[] {
  const entries = Array.isArray(params.Entries) ? params.Entries : [];
  const buses = entries.map((entry) => {
    const name = optionalString(asObject(entry), 'EventBusName') ?? 'default';
    return name.startsWith('arn:') ? name : `arn:aws:events:${scope.region}:${scope.accountId}:event-bus/${name}`;
  });
  return [...new Set(buses.length ? buses : [`arn:aws:events:${scope.region}:${scope.accountId}:event-bus/default`])];
}

function camelKeys(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k.charAt(0).toLowerCase() + k.slice(1), v]));
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function optionalString(params: Record<string, unknown>, field: string): string | undefined {
  const value = params[field];
  return typeof value === 'string' && value ? value : undefined;
}

function requiredString(params: Record<string, unknown>, field: string): string {
  const value = optionalString(params, field);
  if (value === undefined) throw new Error(`the Task's Parameters name no ${field}`);
  return value;
}
