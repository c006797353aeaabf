import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { lookup } from 'node:dns';
import { Agent } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startLocalResults } from '../../../local/s3/local-results.ts';
import { startSfnFacade } from '../../../local/stepfunctions/sfn-facade.ts';
import { ACCOUNT, assumed, REGION, role, useGatewayHarness } from './gateway-harness.ts';

const quiet = { warn: () => undefined, error: () => undefined };
const PASS = JSON.stringify({ StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
const WAIT = JSON.stringify({ StartAt: 'Wait', States: { Wait: { Type: 'Wait', Seconds: 30, End: true } } });
const machineArn = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;

// Shaped like ServerMcpRoleDefaultPolicy7EE236F2: start the async machines, sync-start the
// express one, describe and stop executions of the async ones.
const MCP = role('AsyncMcp-ServerMcpRole827BB655-0A1B2C3D4E5F', [
  { Action: 'states:StartExecution', Effect: 'Allow', Resource: [machineArn('AsyncMcp-export_dataset')] },
  { Action: 'states:StartSyncExecution', Effect: 'Allow', Resource: machineArn('AsyncMcp-quick_calculation') },
  {
    Action: ['states:DescribeExecution', 'states:StopExecution'],
    Effect: 'Allow',
    Resource: `arn:aws:states:${REGION}:${ACCOUNT}:execution:AsyncMcp-export_dataset:*`,
  },
]);

describe('the IAM gateway in front of the Step Functions facade, driven by the real SFNClient', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const facade = harness.closeLater(
      await startSfnFacade({
        stateMachines: [
          { name: 'AsyncMcp-export_dataset', definitionText: WAIT, workflowType: 'STANDARD' },
          { name: 'AsyncMcp-quick_calculation', definitionText: PASS, workflowType: 'EXPRESS' },
        ],
        resolveWorker: () => async (event) => event,
        logger: quiet,
      }),
    );
    const authority = harness.authority([MCP]);
    const gateway = await harness.gateway({ service: 'states', upstream: facade.endpoint, authority });
    const client = new SFNClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: authority.credentialsFor(MCP.arn, 'mcp'),
      disableHostPrefix: true,
    });
    harness.closeLater({ close: () => client.destroy() });
    return { authority, client, gateway };
  }

  it('refuses a request signed with the wrong secret with InvalidSignatureException', async () => {
    const { authority, gateway } = await setUp();
    const forged = new SFNClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: { ...authority.credentialsFor(MCP.arn, 'mcp'), secretAccessKey: 'forged' },
      maxAttempts: 1,
    });
    harness.closeLater({ close: () => forged.destroy() });
    await expect(forged.send(new StartExecutionCommand({ stateMachineArn: machineArn('AsyncMcp-export_dataset'), input: '{}' }))).rejects.toMatchObject({
      name: 'InvalidSignatureException',
    });
    expect(authority.decisions()).toEqual([]);
  });

  it('passes allowed starts, describes and stops through', async () => {
    const { client, authority } = await setUp();
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: machineArn('AsyncMcp-export_dataset'), name: 'op-1', input: '{}' }),
    );
    await expect(client.send(new DescribeExecutionCommand({ executionArn }))).resolves.toMatchObject({ status: 'RUNNING' });
    await client.send(new StopExecutionCommand({ executionArn }));
    const sync = await client.send(new StartSyncExecutionCommand({ stateMachineArn: machineArn('AsyncMcp-quick_calculation'), input: '{"a":1}' }));
    expect(sync).toMatchObject({ status: 'SUCCEEDED', output: '{"a":1}' });
    expect(authority.decisions().map((d) => `${d.action} ${d.allowed}`)).toEqual([
      'states:StartExecution true',
      'states:DescribeExecution true',
      'states:StopExecution true',
      'states:StartSyncExecution true',
    ]);
  });

  it('verifies StartSyncExecution sent to its sync- host prefix, as the SDK sends it without disableHostPrefix', async () => {
    const { authority, gateway } = await setUp();
    // What the function sandbox does: sync-<host> resolves to <host>. Any other name fails, so the call must carry the prefix.
    const httpAgent = new Agent({
      lookup: (host, options, callback) =>
        host.startsWith('sync-') ? lookup(host.slice('sync-'.length), options, callback) : callback(new Error(`no sync- prefix: ${host}`), '', 4),
    });
    const client = new SFNClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: authority.credentialsFor(MCP.arn, 'mcp'),
      requestHandler: { httpAgent },
    });
    harness.closeLater({ close: () => client.destroy() });
    await expect(client.send(new StartSyncExecutionCommand({ stateMachineArn: machineArn('AsyncMcp-quick_calculation'), input: '{}' }))).resolves.toMatchObject(
      { status: 'SUCCEEDED' },
    );
  });

  it("refuses StartExecution of the express machine (granted StartSyncExecution only) with AWS's message", async () => {
    const { client } = await setUp();
    const resource = machineArn('AsyncMcp-quick_calculation');
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: resource, input: '{}' }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: `User: ${assumed(MCP.name, 'mcp')} is not authorized to perform: states:StartExecution on resource: ${resource} because no identity-based policy allows the states:StartExecution action`,
    });
    await expect(client.send(new ListExecutionsCommand({ stateMachineArn: machineArn('AsyncMcp-export_dataset') }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('states:ListExecutions on resource: arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-export_dataset'),
    });
  });
});

const BUCKET = 'async-mcp-results';
const BUCKET_ARN = `arn:aws:s3:::${BUCKET}`;
// Shaped like the MCP role's results grant: objects under results/ only, no ListBucket.
const RESULTS = role('ResultsWriter', [{ Action: ['s3:GetObject', 's3:PutObject'], Effect: 'Allow', Resource: `${BUCKET_ARN}/results/*` }]);
const LISTER = role('ResultsLister', [{ Action: ['s3:GetObject', 's3:ListBucket'], Effect: 'Allow', Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`] }]);

describe('the IAM gateway in front of s3rver, driven by the real S3Client', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const results = harness.closeLater(await startLocalResults({ host: '127.0.0.1' }));
    const authority = harness.authority([RESULTS, LISTER]);
    const gateway = await harness.gateway({
      service: 's3',
      upstream: results.endpoint,
      authority,
      upstreamCredentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const clientFor = (roleArn: string) => {
      const client = new S3Client({
        region: REGION,
        endpoint: gateway.endpoint,
        forcePathStyle: true,
        credentials: authority.credentialsFor(roleArn, 'worker'),
      });
      harness.closeLater({ close: () => client.destroy() });
      return client;
    };
    return { authority, gateway, clientFor };
  }

  it('refuses a request signed with the wrong secret with SignatureDoesNotMatch', async () => {
    const { authority, gateway } = await setUp();
    const credentials = authority.credentialsFor(RESULTS.arn, 'worker');
    const forged = new S3Client({
      region: REGION,
      endpoint: gateway.endpoint,
      forcePathStyle: true,
      credentials: { ...credentials, secretAccessKey: 'forged' },
      maxAttempts: 1,
    });
    harness.closeLater({ close: () => forged.destroy() });
    await expect(forged.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'results/x', Body: 'x' }))).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    expect(authority.decisions()).toEqual([]);
  });

  it('streams an allowed object through both ways', async () => {
    const { clientFor } = await setUp();
    const client = clientFor(RESULTS.arn);
    const body = Buffer.alloc(3 * 1024 * 1024, 'x');
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'results/op-1.json', Body: body }));
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/op-1.json' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    await expect(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'results/op-1.json' }))).resolves.toMatchObject({ ContentLength: body.length });
  });

  it("refuses an object outside the grant with AccessDenied and S3's message", async () => {
    const { clientFor } = await setUp();
    const error = await clientFor(RESULTS.arn)
      .send(new PutObjectCommand({ Bucket: BUCKET, Key: 'other/x', Body: 'x' }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'AccessDenied',
      message: `User: ${assumed(RESULTS.name, 'worker')} is not authorized to perform: s3:PutObject on resource: "${BUCKET_ARN}/other/x" because no identity-based policy allows the s3:PutObject action`,
      $metadata: { httpStatusCode: 403 },
    });
    await expect(clientFor(RESULTS.arn).send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'results/' }))).rejects.toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining(`s3:ListBucket on resource: "${BUCKET_ARN}"`),
    });
  });

  it('answers a missing key with AccessDenied to a caller who may not list the bucket, NoSuchKey to one who may', async () => {
    const { clientFor } = await setUp();
    await expect(clientFor(RESULTS.arn).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/missing' }))).rejects.toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining(`s3:ListBucket on resource: "${BUCKET_ARN}"`),
    });
    await expect(clientFor(LISTER.arn).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'results/missing' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
  });
});
