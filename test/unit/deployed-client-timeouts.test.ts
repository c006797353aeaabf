/**
 * The deployed AWS SDK clients bound each attempt (issue 27, item 3): a call that hangs fails
 * and is retried a few times instead of running until the function's timeout, and every
 * bound fits inside the function's own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ATTEMPT_TIMEOUT_MS,
  boundedClientConfig,
  CONNECT_TIMEOUT_MS,
  DEPLOYED_CLIENT_CONFIG,
  MAX_ATTEMPTS,
  runWaitingClientConfig,
} from '../../lambdas/aws/aws-client-config.ts';
import { REQUEST_MARGIN_SECONDS, requestTimeoutSeconds } from '../../lambdas/operations/operations-limits.ts';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A loopback endpoint that takes every request and never answers: a hung DynamoDB. */
async function hungEndpoint() {
  const seen = { requests: 0 };
  server = createServer(() => {
    seen.requests++;
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, seen };
}

describe('deployed AWS clients', () => {
  it('a call to an endpoint that never answers fails with a TimeoutError after the SDK attempts, instead of waiting on', async () => {
    const { endpoint, seen } = await hungEndpoint();
    const client = new DynamoDBClient({
      ...boundedClientConfig(200),
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example' },
    });
    const read = client.send(new GetItemCommand({ TableName: 'operations', Key: { pk: { S: 'OP#x' } } }));
    await expect(read).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(seen.requests).toBe(MAX_ATTEMPTS);
    client.destroy();
  });

  it("every attempt of a deployed call, and all of them, fit inside the function's own timeout", () => {
    expect(DEPLOYED_CLIENT_CONFIG.requestHandler).toMatchObject({
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: ATTEMPT_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    });
    // All attempts of an ordinary call fit in the seconds a request keeps past its blocking bound.
    expect(MAX_ATTEMPTS * (CONNECT_TIMEOUT_MS + ATTEMPT_TIMEOUT_MS)).toBeLessThan(REQUEST_MARGIN_SECONDS * 1000);
    for (const maxBlockingSeconds of [1, 50, 885]) {
      const { requestHandler } = runWaitingClientConfig(maxBlockingSeconds);
      // A StartSyncExecution may wait its whole bound, and is never cut short before it...
      expect(requestHandler.requestTimeout).toBeGreaterThan(maxBlockingSeconds * 1000);
      // ...but no attempt outlasts the function.
      expect(CONNECT_TIMEOUT_MS + requestHandler.requestTimeout).toBeLessThan(requestTimeoutSeconds(maxBlockingSeconds) * 1000);
    }
  });
});
