/**
 * Issue 27.5, for each endpoint alone (the as-deployed stack starts them too): the local AWS
 * endpoints listen on 127.0.0.1 whatever host they are given, and the PutEvents endpoint, given
 * a key, takes only requests that key signed, over the body as sent.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import { startPutEventsEndpoint, type EventBridgeEvent } from '../../local/events/put-events-endpoint.ts';
import { IamAuthority } from '../../local/iam/iam-authority.ts';
import { startIamGateway } from '../../local/iam/iam-gateway.ts';
import { startLocalResults } from '../../local/s3/local-results.ts';
import { startLocalSecretsManager } from '../../local/secretsmanager/local-secrets-manager.ts';

const REGION = 'us-east-1';
const KEY = { accessKeyId: 'LOCALTESTKEY', secretAccessKey: 'a-secret-for-this-run-only' };
const entry = { Source: 'async-mcp', DetailType: 'Operation Status Changed', Detail: JSON.stringify({ status: 'completed' }) };

describe('local AWS endpoints', () => {
  it('listen on 127.0.0.1 when asked for 0.0.0.0', async () => {
    const events = await startPutEventsEndpoint({ region: REGION, accountId: '000000000000', host: '0.0.0.0', onEvent: () => undefined });
    const results = await startLocalResults({ host: '0.0.0.0' });
    const secrets = await startLocalSecretsManager({ host: '0.0.0.0', secrets: [] });
    try {
      expect([events.endpoint, results.endpoint, secrets.endpoint].map((endpoint) => new URL(endpoint).hostname)).toEqual([
        '127.0.0.1',
        '127.0.0.1',
        '127.0.0.1',
      ]);
    } finally {
      await Promise.all([events.close(), results.close(), secrets.close()]);
    }
  });

  it('an IAM gateway listens on 127.0.0.1 whatever host it is given: it holds the credentials of every role', async () => {
    const authority = new IamAuthority([], { logger: { warn: () => undefined } });
    // "localhost" rather than a wildcard: before the fix the gateway bound what it was given.
    const gateway = await startIamGateway({ service: 'dynamodb', upstream: 'http://127.0.0.1:9', authority, host: 'localhost' });
    try {
      expect(new URL(gateway.endpoint).hostname).toBe('127.0.0.1');
    } finally {
      await gateway.close();
    }
  });

  it('PutEvents with a key takes what that key signed, and refuses a signed request whose body was changed', async () => {
    const delivered: EventBridgeEvent[] = [];
    const events = await startPutEventsEndpoint({
      region: REGION,
      accountId: '000000000000',
      credentials: KEY,
      onEvent: (event) => void delivered.push(event),
    });
    const client = new EventBridgeClient({ region: REGION, endpoint: events.endpoint, credentials: KEY, maxAttempts: 1 });
    try {
      expect((await client.send(new PutEventsCommand({ Entries: [entry] }))).FailedEntryCount).toBe(0);
      // After signing (the deserialize step runs after it), another detail of the same length.
      client.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { body: Uint8Array };
          request.body = new TextEncoder().encode(new TextDecoder().decode(request.body).replace('completed', 'cancelled'));
          return next(args);
        },
        { step: 'deserialize', name: 'tamperAfterSigning' },
      );
      await expect(client.send(new PutEventsCommand({ Entries: [entry] }))).rejects.toMatchObject({ name: 'InvalidSignatureException' });
      expect(delivered.map((event) => event.detail)).toEqual([{ status: 'completed' }]);
    } finally {
      client.destroy();
      await events.close();
    }
  });
});
