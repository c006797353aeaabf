/**
 * The local SigV4 check refuses a signing date more than 15 minutes from now, as AWS does, at
 * every local endpoint that verifies signatures (the PutEvents endpoint with a key, and the IAM
 * gateways in front of the JSON services and S3), with the service's own error. The clients
 * sign with their clock a day off and make one attempt only: an SDK corrects its clock from
 * the answer's Date and tries again, which would hide the refusal.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startPutEventsEndpoint, type EventBridgeEvent } from '../../local/events/put-events-endpoint.ts';
import { IamAuthority } from '../../local/iam/iam-authority.ts';
import { startIamGateway } from '../../local/iam/iam-gateway.ts';
import { verifySigV4 } from '../../local/iam/sigv4-verifier.ts';
import { signRequest } from '../../client/sigv4-signer.ts';

const REGION = 'us-east-1';
const KEY = { accessKeyId: 'LOCALTESTKEY', secretAccessKey: 'a-secret-for-this-run-only' };
const DAY_MS = 86_400_000;
const entry = { Source: 'async-mcp', DetailType: 'Operation Status Changed', Detail: JSON.stringify({ status: 'completed' }) };
/** AWS's text: "Signature expired: <signed> is now earlier than <now - 15 min> (<now> - 15 min.)". */
const EXPIRED = /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 15 min\.\)$/;

describe('a signature older than 15 minutes', () => {
  it('a day-old signed PutEvents is refused with InvalidSignatureException "Signature expired", and nothing is delivered', async () => {
    const delivered: EventBridgeEvent[] = [];
    const events = await startPutEventsEndpoint({
      region: REGION,
      accountId: '000000000000',
      credentials: KEY,
      onEvent: (event) => void delivered.push(event),
    });
    const stale = new EventBridgeClient({ region: REGION, endpoint: events.endpoint, credentials: KEY, maxAttempts: 1, systemClockOffset: -DAY_MS });
    const current = new EventBridgeClient({ region: REGION, endpoint: events.endpoint, credentials: KEY, maxAttempts: 1 });
    try {
      const refused = await stale.send(new PutEventsCommand({ Entries: [entry] })).catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 400 } });
      expect((refused as Error).message).toMatch(EXPIRED);
      expect(delivered).toEqual([]);
      // Signed now, the same request is taken.
      expect((await current.send(new PutEventsCommand({ Entries: [entry] }))).FailedEntryCount).toBe(0);
    } finally {
      stale.destroy();
      current.destroy();
      await events.close();
    }
  });

  it('the IAM gateway refuses a day-old DynamoDB request with InvalidSignatureException and a day-old S3 request with RequestTimeTooSkewed', async () => {
    const authority = new IamAuthority([], { logger: { warn: () => undefined } });
    // Refused before anything is forwarded: the upstream is a closed port.
    const dynamo = await startIamGateway({
      service: 'dynamodb',
      upstream: 'http://127.0.0.1:9',
      authority,
      logger: { warn: () => undefined, error: () => undefined },
    });
    const s3 = await startIamGateway({ service: 's3', upstream: 'http://127.0.0.1:9', authority, logger: { warn: () => undefined, error: () => undefined } });
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const dynamoClient = new DynamoDBClient({ region: REGION, endpoint: dynamo.endpoint, credentials, maxAttempts: 1, systemClockOffset: -DAY_MS });
    const s3Client = new S3Client({ region: REGION, endpoint: s3.endpoint, credentials, maxAttempts: 1, forcePathStyle: true, systemClockOffset: DAY_MS });
    try {
      const refused = await dynamoClient.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 400 } });
      expect((refused as Error).message).toMatch(EXPIRED);
      // A day ahead: S3's own code and text.
      const skewed = await s3Client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })).catch((error: unknown) => error);
      expect(skewed).toMatchObject({
        name: 'RequestTimeTooSkewed',
        message: 'The difference between the request time and the current time is too large.',
        $metadata: { httpStatusCode: 403 },
      });
    } finally {
      dynamoClient.destroy();
      s3Client.destroy();
      await Promise.all([dynamo.close(), s3.close()]);
    }
  });

  it('the verifier takes a signature 14 minutes old or 14 ahead, and refuses one 16 ahead as not yet current', async () => {
    const iam = new IamAuthority([], { logger: { warn: () => undefined } });
    const url = new URL('http://127.0.0.1:3000/mcp');
    const request = async (offsetMs: number) => {
      const headers = await signRequest(
        { url: url.href, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
        { region: REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, now: () => new Date(Date.now() + offsetMs) },
      );
      return verifySigV4(
        { method: 'POST', host: url.host, path: url.pathname, query: url.searchParams, headers, body: Buffer.from('{}') },
        { service: 'lambda', region: REGION, lookup: (key) => iam.identify(key) },
      );
    };
    await expect(request(-14 * 60_000)).resolves.toMatchObject({ ok: true });
    await expect(request(14 * 60_000)).resolves.toMatchObject({ ok: true });
    const ahead = await request(16 * 60_000);
    expect(ahead).toMatchObject({ ok: false, problem: 'expired' });
    expect(!ahead.ok && ahead.problem === 'expired' ? ahead.message : '').toMatch(
      /^Signature not yet current: \d{8}T\d{6}Z is still later than \d{8}T\d{6}Z \(\d{8}T\d{6}Z \+ 15 min\.\)$/,
    );
  });
});
