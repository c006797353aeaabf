/**
 * What IAM authorizes for one HTTP request to a service: its action(s) and resource ARN(s), as the
 * service authorization reference and AWS's own AccessDenied messages name them.
 */

/** One action IAM checks for a request, on one resource. */
export interface RequestAction {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

/** The request as a gateway sees it. */
export interface ServiceRequest {
  method: string;
  /** The path, still percent-encoded, without the query. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased names. */
  headers: Record<string, string | undefined>;
  /** JSON services: the parsed body. S3: the raw body when the gateway read it (POST ?delete), else undefined. */
  body?: unknown;
}

/** Where the request's resources live, and the lookups a request alone cannot answer. */
export interface ActionScope {
  region: string;
  accountId: string;
  /** The full ARN of a secret named by name or (partial) ARN; AWS authorizes on the full ARN. */
  secretArn?: (secretId: string) => string | undefined;
  /** The state machine whose task issued a task token (SendTask* are authorized on it). */
  stateMachineOfTaskToken?: (taskToken: string) => string | undefined;
  /** A table's partition key attribute, so item calls carry `dynamodb:LeadingKeys` as AWS sets it. */
  partitionKeyOf?: (tableName: string) => string | undefined;
  /** The durable execution a callback id belongs to (SendDurableExecutionCallback* are authorized on it). */
  durableExecutionOfCallback?: (callbackId: string) => string | undefined;
}

export type GatewayService = 'dynamodb' | 'states' | 's3' | 'secretsmanager' | 'events' | 'sqs' | 'lambda';

/** The actions of a request to `service`. Throws for a request that names no operation. */
export function requestActions(service: GatewayService, request: ServiceRequest, scope: ActionScope): RequestAction[] {
  switch (service) {
    case 'dynamodb':
      return dynamodbActions(operationOf(request, 'DynamoDB_20120810.'), asObject(request.body), scope);
    case 'states':
      return stepFunctionsActions(operationOf(request, 'AWSStepFunctions.'), asObject(request.body), scope);
    case 'secretsmanager':
      return secretsManagerActions(operationOf(request, 'secretsmanager.'), asObject(request.body), scope);
    case 'events':
      return eventBridgeActions(operationOf(request, 'AWSEvents.'), asObject(request.body), scope);
    case 'sqs':
      return sqsActions(operationOf(request, 'AmazonSQS.'), asObject(request.body), scope);
    case 's3':
      return s3Actions(request);
    case 'lambda':
      return lambdaActions(request, scope);
  }
}

/** The operation of an AWS JSON request, from `X-Amz-Target: <prefix><Operation>`. */
export function operationOf(request: Pick<ServiceRequest, 'headers'>, prefix: string): string {
  const target = request.headers['x-amz-target'] ?? '';
  if (!target.startsWith(prefix)) throw new NotAnOperationError(`X-Amz-Target "${target}" is not a ${prefix.slice(0, -1)} operation`);
  return target.slice(prefix.length);
}

/** `arn:aws:dynamodb:<region>:<account>:table/<name>`, or the ARN itself when given one. */
export function tableArn(nameOrArn: string, scope: Pick<ActionScope, 'region' | 'accountId'>): string {
  return nameOrArn.startsWith('arn:') ? nameOrArn : `arn:aws:dynamodb:${scope.region}:${scope.accountId}:table/${nameOrArn}`;
}

/** DynamoDB: one action per operation on its table or index, per table for batch and transaction calls. */
export function dynamodbActions(operation: string, body: Record<string, unknown>, scope: ActionScope): RequestAction[] {
  const on = (action: string, table: string, index?: unknown) => ({
    action: `dynamodb:${action}`,
    resource: typeof index === 'string' && index ? `${tableArn(table, scope)}/index/${index}` : tableArn(table, scope),
  });
  switch (operation) {
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(asObject(body.RequestItems)).map((table) => on(operation, table));
    case 'TransactGetItems':
      // No IAM action of its own: each item is the GetItem it performs.
      return asArray(body.TransactItems).map((item) => on('GetItem', stringField(asObject(asObject(item).Get), 'TableName')));
    case 'TransactWriteItems':
      return asArray(body.TransactItems).map((item) => {
        const [kind, request] = Object.entries(asObject(item))[0] ?? ['', {}];
        const action = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' }[kind];
        if (!action) throw new Error(`TransactWriteItems item "${kind}" is none of Put, Update, Delete, ConditionCheck`);
        return on(action, stringField(asObject(request), 'TableName'));
      });
    case 'ExecuteStatement':
      return [partiqlAction(stringField(body, 'Statement'), scope)];
    case 'BatchExecuteStatement':
      return asArray(body.Statements).map((item) => partiqlAction(stringField(asObject(item), 'Statement'), scope));
    case 'ExecuteTransaction':
      return asArray(body.TransactStatements).map((item) => partiqlAction(stringField(asObject(item), 'Statement'), scope));
    case 'ListTables':
    case 'DescribeLimits':
    case 'DescribeEndpoints':
      return [{ action: `dynamodb:${operation}`, resource: '*' }];
    case 'ListTagsOfResource':
    case 'TagResource':
    case 'UntagResource':
      return [{ action: `dynamodb:${operation}`, resource: stringField(body, 'ResourceArn') }];
    case 'Query':
    case 'Scan':
      return [on(operation, stringField(body, 'TableName'), body.IndexName)];
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem': {
      const table = stringField(body, 'TableName');
      // The item's partition key value, which a `dynamodb:LeadingKeys` condition tests.
      const key = scope.partitionKeyOf?.(table.startsWith('arn:') ? (table.split('/')[1] ?? table) : table);
      const value = key === undefined ? undefined : asObject(asObject(operation === 'PutItem' ? body.Item : body.Key)[key]).S;
      return [{ ...on(operation, table), ...(typeof value === 'string' ? { context: { 'dynamodb:LeadingKeys': [value] } } : {}) }];
    }
    default:
      return [on(operation, stringField(body, 'TableName'))];
  }
}

/** PartiQL statements are authorized as dynamodb:PartiQL<Verb> on the table they name. */
function partiqlAction(statement: string, scope: ActionScope): RequestAction {
  const match =
    /^\s*(SELECT)\b[\s\S]*?\bFROM\s+"?([A-Za-z0-9_.-]+)"?(?:\."?([A-Za-z0-9_.-]+)"?)?/i.exec(statement) ??
    /^\s*(INSERT)\s+INTO\s+"?([A-Za-z0-9_.-]+)"?/i.exec(statement) ??
    /^\s*(UPDATE)\s+"?([A-Za-z0-9_.-]+)"?/i.exec(statement) ??
    /^\s*(DELETE)\s+FROM\s+"?([A-Za-z0-9_.-]+)"?/i.exec(statement);
  const [, word, tableName] = match ?? [];
  if (!match || word === undefined || tableName === undefined) throw new MissingFieldError('Statement');
  const verb = word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
  const table = tableArn(tableName, scope);
  return { action: `dynamodb:PartiQL${verb}`, resource: match[3] ? `${table}/index/${match[3]}` : table };
}

/** Step Functions: machines for starts and lists, executions for the rest; SendTask* on the token's machine. */
export function stepFunctionsActions(operation: string, body: Record<string, unknown>, scope: ActionScope): RequestAction[] {
  const action = `states:${operation}`;
  switch (operation) {
    case 'StartExecution':
    case 'StartSyncExecution':
    case 'ListExecutions':
    case 'DescribeStateMachine':
    case 'UpdateStateMachine':
    case 'DeleteStateMachine':
      return [{ action, resource: stringField(body, 'stateMachineArn') }];
    case 'DescribeExecution':
    case 'StopExecution':
    case 'GetExecutionHistory':
    case 'DescribeStateMachineForExecution':
    case 'RedriveExecution':
      return [{ action, resource: stringField(body, 'executionArn') }];
    case 'SendTaskSuccess':
    case 'SendTaskFailure':
    case 'SendTaskHeartbeat': {
      // The service authorization reference lists no resource type, yet AWS authorizes these on the
      // state machine of the token's execution (the ARN its AccessDenied names; CDK's
      // grantTaskResponse grants on it). A token no machine issued is authorized as "*".
      const machine = scope.stateMachineOfTaskToken?.(stringField(body, 'taskToken'));
      return [{ action, resource: machine ?? '*' }];
    }
    case 'ListTagsForResource':
    case 'TagResource':
    case 'UntagResource':
      return [{ action, resource: stringField(body, 'resourceArn') }];
    default:
      return [{ action, resource: '*' }];
  }
}

/** Secrets Manager: the secret's full ARN, looked up by name or partial ARN. */
export function secretsManagerActions(operation: string, body: Record<string, unknown>, scope: ActionScope): RequestAction[] {
  const action = `secretsmanager:${operation}`;
  if (operation === 'ListSecrets' || operation === 'GetRandomPassword' || operation === 'BatchGetSecretValue' || operation === 'CreateSecret') {
    return [{ action, resource: operation === 'CreateSecret' ? secretArnFor(stringField(body, 'Name'), scope) : '*' }];
  }
  return [{ action, resource: secretArnFor(stringField(body, 'SecretId'), scope) }];
}

/** EventBridge: PutEvents on each bus its entries name (the default bus when none), as AWS authorizes it. */
export function eventBridgeActions(operation: string, body: Record<string, unknown>, scope: ActionScope): RequestAction[] {
  const action = `events:${operation}`;
  if (operation !== 'PutEvents') return [{ action, resource: '*' }];
  const entries = Array.isArray(body.Entries) ? (body.Entries as unknown[]) : [];
  const buses = new Set(
    entries.map((entry) => {
      const name = (entry as { EventBusName?: unknown } | null)?.EventBusName;
      const bus = typeof name === 'string' && name !== '' ? name : 'default';
      return bus.startsWith('arn:') ? bus : `arn:aws:events:${scope.region}:${scope.accountId}:event-bus/${bus}`;
    }),
  );
  if (buses.size === 0) throw new MissingFieldError('Entries');
  return [...buses].map((resource) => ({ action, resource }));
}

/** SQS (AWS JSON): one action on the queue its QueueUrl names; a batch call is authorized as its single form. */
export function sqsActions(operation: string, body: Record<string, unknown>, scope: ActionScope): RequestAction[] {
  const single: Record<string, string> = {
    SendMessageBatch: 'SendMessage',
    DeleteMessageBatch: 'DeleteMessage',
    ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
  };
  const action = `sqs:${single[operation] ?? operation}`;
  if (operation === 'ListQueues') return [{ action, resource: '*' }];
  if (operation === 'GetQueueUrl' || operation === 'CreateQueue')
    return [{ action, resource: `arn:aws:sqs:${scope.region}:${scope.accountId}:${stringField(body, 'QueueName')}` }];
  // The URL's last two segments are the account and the queue, whatever its host.
  const [account, name] = (URL.parse(stringField(body, 'QueueUrl'))?.pathname ?? '').split('/').filter(Boolean);
  if (!account || !name) throw new MissingFieldError('QueueUrl');
  return [{ action, resource: `arn:aws:sqs:${scope.region}:${account}:${name}` }];
}

/** Lambda's REST paths the durable tools use, each with its IAM action; the label is percent-encoded. */
const LAMBDA_ROUTES: Array<[method: string, path: RegExp, action: string, on: 'function' | 'execution' | 'callback']> = [
  ['POST', /^\/2015-03-31\/functions\/([^/]+)\/invocations$/, 'InvokeFunction', 'function'],
  ['GET', /^\/2025-12-01\/functions\/([^/]+)\/durable-executions$/, 'ListDurableExecutionsByFunction', 'function'],
  ['GET', /^\/2025-12-01\/durable-executions\/([^/]+)$/, 'GetDurableExecution', 'execution'],
  ['GET', /^\/2025-12-01\/durable-executions\/([^/]+)\/state$/, 'GetDurableExecutionState', 'execution'],
  ['GET', /^\/2025-12-01\/durable-executions\/([^/]+)\/history$/, 'GetDurableExecutionHistory', 'execution'],
  ['POST', /^\/2025-12-01\/durable-executions\/([^/]+)\/checkpoint$/, 'CheckpointDurableExecution', 'execution'],
  ['POST', /^\/2025-12-01\/durable-executions\/([^/]+)\/stop$/, 'StopDurableExecution', 'execution'],
  ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/succeed$/, 'SendDurableExecutionCallbackSuccess', 'callback'],
  ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/fail$/, 'SendDurableExecutionCallbackFailure', 'callback'],
  ['POST', /^\/2025-12-01\/durable-execution-callbacks\/([^/]+)\/heartbeat$/, 'SendDurableExecutionCallbackHeartbeat', 'callback'],
];

/**
 * Lambda (restJson1): Invoke and ListDurableExecutionsByFunction on the function (qualified when
 * the name or `Qualifier` is), the durable calls on the execution's ARN, which the path names,
 * and the callback calls on the execution of the callback, as the service authorization
 * reference gives their resource types ("function", "durable execution"). A callback id no
 * execution issued is authorized as "*".
 */
export function lambdaActions(request: Pick<ServiceRequest, 'method' | 'path' | 'query'>, scope: ActionScope): RequestAction[] {
  for (const [method, pattern, action, on] of LAMBDA_ROUTES) {
    const label = request.method.toUpperCase() === method ? pattern.exec(request.path)?.[1] : undefined;
    if (label === undefined) continue;
    const value = decodeKey(label);
    const resource =
      on === 'function'
        ? lambdaFunctionArn(value, request.query.get('Qualifier'), scope)
        : on === 'execution'
          ? value
          : (scope.durableExecutionOfCallback?.(value) ?? '*');
    return [{ action: `lambda:${action}`, resource }];
  }
  throw new NotAnOperationError(`Lambda ${request.method} ${request.path} is no operation the local stack serves`);
}

/** The callback id a SendDurableExecutionCallback* request names, decoded; undefined for any other request. */
export function lambdaCallbackId(method: string, path: string): string | undefined {
  for (const [routeMethod, pattern, , on] of LAMBDA_ROUTES) {
    const label = on === 'callback' && method.toUpperCase() === routeMethod ? pattern.exec(path)?.[1] : undefined;
    if (label !== undefined) return decodeKey(label);
  }
  return undefined;
}

/** A function name, partial ARN (`<account>:function:<name>`) or ARN, with its qualifier if any, as a function ARN. */
export function lambdaFunctionArn(nameOrArn: string, qualifier: string | null, scope: Pick<ActionScope, 'region' | 'accountId'>): string {
  const full = /^arn:[^:]+:lambda:[^:]+:\d{12}:function:/.exec(nameOrArn);
  const partial = /^(\d{12}):function:(.+)$/.exec(nameOrArn);
  const arn = full
    ? nameOrArn
    : partial
      ? `arn:aws:lambda:${scope.region}:${partial[1]}:function:${partial[2]}`
      : `arn:aws:lambda:${scope.region}:${scope.accountId}:function:${nameOrArn}`;
  // `Qualifier` and a qualified name must agree, or Lambda refuses the call; either one qualifies it.
  return qualifier && arn.split(':').length === 7 ? `${arn}:${qualifier}` : arn;
}

function secretArnFor(secretId: string, scope: ActionScope): string {
  const known = scope.secretArn?.(secretId);
  if (known) return known;
  return secretId.startsWith('arn:') ? secretId : `arn:aws:secretsmanager:${scope.region}:${scope.accountId}:secret:${secretId}`;
}

/** The bucket and key of an S3 REST request, path-style or virtual-hosted. */
export function s3Location(request: Pick<ServiceRequest, 'path' | 'headers'>): { bucket?: string; key?: string } {
  const host = (request.headers.host ?? '').replace(/:\d+$/, '');
  const virtual = /^(.+?)\.(?:s3[.-](?:[a-z0-9-]+\.)?amazonaws\.com|s3\.localhost|localhost)$/.exec(host);
  const segments = request.path.replace(/^\//, '');
  if (virtual?.[1]) return { bucket: virtual[1], ...(segments ? { key: decodeKey(segments) } : {}) };
  if (!segments) return {};
  const slash = segments.indexOf('/');
  if (slash < 0) return { bucket: decodeKey(segments) };
  const key = segments.slice(slash + 1);
  return { bucket: decodeKey(segments.slice(0, slash)), ...(key ? { key: decodeKey(key) } : {}) };
}

/** S3 REST: object actions on `arn:aws:s3:::bucket/key`, bucket actions on the bucket. */
export function s3Actions(request: ServiceRequest): RequestAction[] {
  const { bucket, key } = s3Location(request);
  const method = request.method.toUpperCase();
  const q = request.query;
  if (!bucket) return [{ action: 's3:ListAllMyBuckets', resource: '*' }];
  const bucketArn = `arn:aws:s3:::${bucket}`;
  if (key === undefined) {
    const on = (action: string, context?: Record<string, string>) => [{ action, resource: bucketArn, ...(context ? { context } : {}) }];
    if (method === 'POST' && q.has('delete')) {
      return deleteKeys(request.body).map((k) => ({ action: 's3:DeleteObject', resource: `${bucketArn}/${k}` }));
    }
    if (method === 'PUT') return on(q.has('lifecycle') ? 's3:PutLifecycleConfiguration' : q.has('policy') ? 's3:PutBucketPolicy' : 's3:CreateBucket');
    if (method === 'DELETE') return on(q.has('policy') ? 's3:DeleteBucketPolicy' : 's3:DeleteBucket');
    if (q.has('location')) return on('s3:GetBucketLocation');
    if (q.has('versions')) return on('s3:ListBucketVersions');
    if (q.has('uploads')) return on('s3:ListBucketMultipartUploads');
    if (q.has('lifecycle')) return on('s3:GetLifecycleConfiguration');
    if (q.has('policy')) return on('s3:GetBucketPolicy');
    // GET (ListObjects, ListObjectsV2) and HEAD (HeadBucket) are both s3:ListBucket.
    const prefix = q.get('prefix');
    return on('s3:ListBucket', prefix !== null ? { 's3:prefix': prefix } : undefined);
  }
  const objectArn = `${bucketArn}/${key}`;
  const on = (action: string) => ({ action, resource: objectArn });
  if (q.has('tagging')) return [on(method === 'PUT' ? 's3:PutObjectTagging' : method === 'DELETE' ? 's3:DeleteObjectTagging' : 's3:GetObjectTagging')];
  if (q.has('acl')) return [on(method === 'PUT' ? 's3:PutObjectAcl' : 's3:GetObjectAcl')];
  switch (method) {
    case 'GET':
    case 'HEAD':
      return [on(q.has('uploadId') ? 's3:ListMultipartUploadParts' : 's3:GetObject')];
    case 'PUT': {
      const source = request.headers['x-amz-copy-source'];
      const copied = source ? [{ action: 's3:GetObject', resource: `arn:aws:s3:::${decodeKey(source.replace(/^\//, '').split('?', 1)[0] ?? '')}` }] : [];
      return [...copied, on('s3:PutObject')];
    }
    case 'POST':
      // CreateMultipartUpload (?uploads) and CompleteMultipartUpload (?uploadId) are s3:PutObject.
      return [on('s3:PutObject')];
    case 'DELETE':
      return [on(q.has('uploadId') ? 's3:AbortMultipartUpload' : 's3:DeleteObject')];
    default:
      throw new NotAnOperationError(`S3 ${method} is no operation`);
  }
}

function deleteKeys(body: unknown): string[] {
  const xml = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  return [...xml.matchAll(/<Key>([\s\S]*?)<\/Key>/g)].map((m) => unescapeXml(m[1] ?? ''));
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e] ?? `&${e};`);
}

function decodeKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringField(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || !value) throw new MissingFieldError(field);
  return value;
}

/** A request that lacks the field naming its resource: the service answers it with a ValidationException. */
export class MissingFieldError extends Error {
  constructor(readonly field: string) {
    super(`1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`);
    this.name = 'MissingFieldError';
  }
}

/** A request that names no operation of the service: the service itself answers it. */
export class NotAnOperationError extends Error {
  override name = 'NotAnOperationError';
}
