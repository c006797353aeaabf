import { describe, expect, it } from 'vitest';
import { integrationActions } from '../../../local/iam/integration-action.ts';
import { requestActions, type ServiceRequest } from '../../../local/iam/request-actions.ts';

const scope = { region: 'us-east-1', accountId: '000000000000' };
const table = (name: string) => `arn:aws:dynamodb:us-east-1:000000000000:table/${name}`;
const json = (target: string, body: unknown): ServiceRequest => ({
  method: 'POST',
  path: '/',
  query: new URLSearchParams(),
  headers: { 'x-amz-target': target },
  body,
});
const rest = (method: string, pathAndQuery: string, headers: Record<string, string> = {}, body?: unknown): ServiceRequest => {
  const url = new URL(pathAndQuery, 'http://x');
  return { method, path: url.pathname, query: url.searchParams, headers: { host: '127.0.0.1:9000', ...headers }, body };
};

describe('the IAM actions of a service request', () => {
  it('DynamoDB: the table, the index, every table of a batch, each item of a transaction', () => {
    expect(requestActions('dynamodb', json('DynamoDB_20120810.GetItem', { TableName: 't' }), scope)).toEqual([
      { action: 'dynamodb:GetItem', resource: table('t') },
    ]);
    expect(requestActions('dynamodb', json('DynamoDB_20120810.Query', { TableName: 't', IndexName: 'byOwner' }), scope)).toEqual([
      { action: 'dynamodb:Query', resource: `${table('t')}/index/byOwner` },
    ]);
    expect(requestActions('dynamodb', json('DynamoDB_20120810.DescribeTimeToLive', { TableName: 't' }), scope)).toEqual([
      { action: 'dynamodb:DescribeTimeToLive', resource: table('t') },
    ]);
    expect(requestActions('dynamodb', json('DynamoDB_20120810.BatchWriteItem', { RequestItems: { a: [], b: [] } }), scope)).toEqual([
      { action: 'dynamodb:BatchWriteItem', resource: table('a') },
      { action: 'dynamodb:BatchWriteItem', resource: table('b') },
    ]);
    const transaction = {
      TransactItems: [{ Put: { TableName: 'a' } }, { Update: { TableName: 'b' } }, { ConditionCheck: { TableName: 'a' } }, { Delete: { TableName: 'c' } }],
    };
    expect(requestActions('dynamodb', json('DynamoDB_20120810.TransactWriteItems', transaction), scope).map((a) => `${a.action} ${a.resource}`)).toEqual([
      `dynamodb:PutItem ${table('a')}`,
      `dynamodb:UpdateItem ${table('b')}`,
      `dynamodb:ConditionCheckItem ${table('a')}`,
      `dynamodb:DeleteItem ${table('c')}`,
    ]);
    expect(requestActions('dynamodb', json('DynamoDB_20120810.TransactGetItems', { TransactItems: [{ Get: { TableName: 'a' } }] }), scope)).toEqual([
      { action: 'dynamodb:GetItem', resource: table('a') },
    ]);
    expect(
      requestActions('dynamodb', json('DynamoDB_20120810.ExecuteStatement', { Statement: 'SELECT * FROM "t"."byOwner" WHERE ownerKey = ?' }), scope),
    ).toEqual([{ action: 'dynamodb:PartiQLSelect', resource: `${table('t')}/index/byOwner` }]);
    expect(
      requestActions(
        'dynamodb',
        json('DynamoDB_20120810.ExecuteTransaction', {
          TransactStatements: [{ Statement: 'UPDATE "t" SET a = 1 WHERE pk = \'x\'' }, { Statement: 'DELETE FROM t WHERE pk = ?' }],
        }),
        scope,
      ),
    ).toEqual([
      { action: 'dynamodb:PartiQLUpdate', resource: table('t') },
      { action: 'dynamodb:PartiQLDelete', resource: table('t') },
    ]);
    expect(() => requestActions('dynamodb', json('AWSStepFunctions.StartExecution', {}), scope)).toThrow(/not a DynamoDB_20120810 operation/);
  });

  it('Step Functions: machines for starts, executions for describes and stops, the token machine for SendTask*', () => {
    const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:m';
    const execution = 'arn:aws:states:us-east-1:000000000000:execution:m:e';
    expect(requestActions('states', json('AWSStepFunctions.StartSyncExecution', { stateMachineArn: machine }), scope)).toEqual([
      { action: 'states:StartSyncExecution', resource: machine },
    ]);
    expect(requestActions('states', json('AWSStepFunctions.ListExecutions', { stateMachineArn: machine }), scope)).toEqual([
      { action: 'states:ListExecutions', resource: machine },
    ]);
    expect(requestActions('states', json('AWSStepFunctions.GetExecutionHistory', { executionArn: execution }), scope)).toEqual([
      { action: 'states:GetExecutionHistory', resource: execution },
    ]);
    const withTokens = { ...scope, stateMachineOfTaskToken: (token: string) => (token === 'tok' ? machine : undefined) };
    expect(requestActions('states', json('AWSStepFunctions.SendTaskHeartbeat', { taskToken: 'tok' }), withTokens)).toEqual([
      { action: 'states:SendTaskHeartbeat', resource: machine },
    ]);
    expect(requestActions('states', json('AWSStepFunctions.SendTaskSuccess', { taskToken: 'other' }), withTokens)).toEqual([
      { action: 'states:SendTaskSuccess', resource: '*' },
    ]);
  });

  it('Secrets Manager: the full ARN, by name or partial ARN', () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:key-AbCdEf';
    const withSecrets = { ...scope, secretArn: (id: string) => (id === 'key' || id === arn ? arn : undefined) };
    expect(requestActions('secretsmanager', json('secretsmanager.GetSecretValue', { SecretId: 'key' }), withSecrets)).toEqual([
      { action: 'secretsmanager:GetSecretValue', resource: arn },
    ]);
    expect(requestActions('secretsmanager', json('secretsmanager.GetSecretValue', { SecretId: 'nope' }), withSecrets)).toEqual([
      { action: 'secretsmanager:GetSecretValue', resource: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:nope' },
    ]);
  });

  it('S3: objects path-style and virtual-hosted, HEAD as GetObject, listing as ListBucket, copies read their source', () => {
    expect(requestActions('s3', rest('GET', '/b/results/a%20b.json'), scope)).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/results/a b.json' },
    ]);
    expect(requestActions('s3', rest('HEAD', '/results/x', { host: 'b.s3.us-east-1.amazonaws.com' }), scope)).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/results/x' },
    ]);
    expect(requestActions('s3', rest('GET', '/b?list-type=2&prefix=results%2F'), scope)).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:prefix': 'results/' } },
    ]);
    expect(requestActions('s3', rest('DELETE', '/b/k'), scope)).toEqual([{ action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/k' }]);
    expect(requestActions('s3', rest('PUT', '/b/k', { 'x-amz-copy-source': '/src/a%2Fb' }), scope)).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::src/a/b' },
      { action: 's3:PutObject', resource: 'arn:aws:s3:::b/k' },
    ]);
    const deletion = Buffer.from('<Delete><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object></Delete>');
    expect(requestActions('s3', rest('POST', '/b?delete', {}, deletion), scope)).toEqual([
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a&b' },
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/c' },
    ]);
  });
});

describe('the IAM actions of a Step Functions Task', () => {
  it('lambda:invoke is lambda:InvokeFunction on the FunctionName, qualified ARNs as themselves', () => {
    const fn = 'arn:aws:lambda:us-east-1:000000000000:function:worker';
    expect(integrationActions('arn:aws:states:::lambda:invoke', { FunctionName: fn, Payload: {} }, scope)).toEqual([
      { action: 'lambda:InvokeFunction', resource: fn },
    ]);
    expect(integrationActions('arn:aws:states:::lambda:invoke.waitForTaskToken', { FunctionName: `${fn}:7` }, scope)).toEqual([
      { action: 'lambda:InvokeFunction', resource: `${fn}:7` },
    ]);
    expect(integrationActions('arn:aws:states:::lambda:invoke', { FunctionName: 'worker', Qualifier: 'live' }, scope)).toEqual([
      { action: 'lambda:InvokeFunction', resource: `${fn}:live` },
    ]);
    expect(integrationActions(fn, {}, scope)).toEqual([{ action: 'lambda:InvokeFunction', resource: fn }]);
  });

  it('SDK integrations map to <prefix>:<Action> on the resource their parameters name', () => {
    expect(integrationActions('arn:aws:states:::aws-sdk:dynamodb:putItem', { TableName: 't', Item: {} }, scope)).toEqual([
      { action: 'dynamodb:PutItem', resource: table('t') },
    ]);
    expect(integrationActions('arn:aws:states:::aws-sdk:s3:listObjectsV2', { Bucket: 'b' }, scope)).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::b' },
    ]);
    expect(integrationActions('arn:aws:states:::aws-sdk:s3:getObject', { Bucket: 'b', Key: 'k/1' }, scope)).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/k/1' },
    ]);
    expect(
      integrationActions('arn:aws:states:::aws-sdk:sfn:describeExecution', { ExecutionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:e' }, scope),
    ).toEqual([{ action: 'states:DescribeExecution', resource: 'arn:aws:states:us-east-1:000000000000:execution:m:e' }]);
    expect(integrationActions('arn:aws:states:::aws-sdk:cloudwatch:putMetricData', { Namespace: 'n' }, scope)).toEqual([
      { action: 'cloudwatch:PutMetricData', resource: '*' },
    ]);
  });

  it('optimized integrations: DynamoDB, SNS, SQS, EventBridge', () => {
    expect(integrationActions('arn:aws:states:::dynamodb:updateItem', { TableName: 't' }, scope)).toEqual([
      { action: 'dynamodb:UpdateItem', resource: table('t') },
    ]);
    expect(integrationActions('arn:aws:states:::sns:publish', { TopicArn: 'arn:aws:sns:us-east-1:000000000000:topic', Message: 'm' }, scope)).toEqual([
      { action: 'sns:Publish', resource: 'arn:aws:sns:us-east-1:000000000000:topic' },
    ]);
    expect(
      integrationActions('arn:aws:states:::sqs:sendMessage', { QueueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/q', MessageBody: 'm' }, scope),
    ).toEqual([{ action: 'sqs:SendMessage', resource: 'arn:aws:sqs:us-east-1:000000000000:q' }]);
    expect(integrationActions('arn:aws:states:::events:putEvents', { Entries: [{ Detail: {} }, { EventBusName: 'bus' }] }, scope)).toEqual([
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:000000000000:event-bus/default' },
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:000000000000:event-bus/bus' },
    ]);
    expect(() => integrationActions('arn:aws:states:::glue:startJobRun.sync', {}, scope)).toThrow(/not an optimized integration/);
  });
});
