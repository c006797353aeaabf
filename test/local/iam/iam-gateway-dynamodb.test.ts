import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../../local/dynamodb/dynamo-local.ts';
import { ACCOUNT, assumed, REGION, role, useGatewayHarness } from './gateway-harness.ts';

const TABLE = 'AsyncMcp-ServerOperationsTable5E310BC9-1A2B3C4D5E6F';
const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE}`;
// What the template grants the request-input worker: ServerWorkersrequestinputRoleDefaultPolicy8A85290E.
const WORKER = role('AsyncMcp-ServerWorkersrequestinputRole4789A50A-0A1B2C3D4E5F', [
  { Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: TABLE_ARN },
]);

describe('the IAM gateway in front of DynamoDB (dynalite), driven by the real DynamoDBClient', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const dynamo = harness.closeLater(await startLocalDynamo({ tableName: TABLE }));
    const authority = harness.authority([WORKER]);
    const gateway = await harness.gateway({ service: 'dynamodb', upstream: dynamo.endpoint, authority });
    const credentials = authority.credentialsFor(WORKER.arn, 'request-input');
    const client = harness.closeLater({
      inner: new DynamoDBClient({ region: REGION, endpoint: gateway.endpoint, credentials }),
      close() {
        this.inner.destroy();
      },
    }).inner;
    return { authority, gateway, client, credentials };
  }

  it('passes an allowed call through to the table', async () => {
    const { client, authority } = await setUp();
    await client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'OP#1' }, status: { S: 'working' } } }));
    const got = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'OP#1' } } }));
    expect(got.Item?.status).toEqual({ S: 'working' });
    expect(authority.decisions().map((d) => [d.action, d.resource, d.allowed])).toEqual([
      ['dynamodb:PutItem', TABLE_ARN, true],
      ['dynamodb:GetItem', TABLE_ARN, true],
    ]);
  });

  it("refuses a call outside the role's policy with AccessDeniedException and AWS's message", async () => {
    const { client } = await setUp();
    await client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'OP#2' } } }));
    const error = await client.send(new DeleteItemCommand({ TableName: TABLE, Key: { pk: { S: 'OP#2' } } })).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'AccessDeniedException',
      message: `User: ${assumed(WORKER.name, 'request-input')} is not authorized to perform: dynamodb:DeleteItem on resource: ${TABLE_ARN} because no identity-based policy allows the dynamodb:DeleteItem action`,
      $metadata: { httpStatusCode: 400 },
    });
    // Nothing reached the table.
    const still = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'OP#2' } } }));
    expect(still.Item).toBeDefined();
  });

  it('authorizes a Query on an index as table/<t>/index/<i>', async () => {
    const { client } = await setUp();
    const error = await client
      .send(
        new QueryCommand({ TableName: TABLE, IndexName: 'byOwner', KeyConditionExpression: 'ownerKey = :o', ExpressionAttributeValues: { ':o': { S: 'x' } } }),
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`dynamodb:Query on resource: ${TABLE_ARN}/index/byOwner because`),
    });
  });

  it('refuses a request signed with the wrong secret, and a key it never issued', async () => {
    const { gateway, credentials } = await setUp();
    const forged = new DynamoDBClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: { ...credentials, secretAccessKey: 'not-the-secret-not-the-secret-not-the-se' },
      maxAttempts: 1,
    });
    const unknown = new DynamoDBClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: { accessKeyId: 'ASIAAAAAAAAAAAAAAAAA', secretAccessKey: 'x', sessionToken: 'y' },
      maxAttempts: 1,
    });
    const noToken = new DynamoDBClient({
      region: REGION,
      endpoint: gateway.endpoint,
      credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
      maxAttempts: 1,
    });
    try {
      const get = new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'OP#1' } } });
      await expect(forged.send(get)).rejects.toMatchObject({
        name: 'InvalidSignatureException',
        message: expect.stringContaining('The request signature we calculated does not match'),
      });
      await expect(unknown.send(get)).rejects.toMatchObject({
        name: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      });
      await expect(noToken.send(get)).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
    } finally {
      forged.destroy();
      unknown.destroy();
      noToken.destroy();
    }
  });
});
