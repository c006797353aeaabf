/**
 * The results bucket and the server key are read with bounded clients, as DynamoDB is: a hung
 * S3 or Secrets Manager fails the call with a TimeoutError after the SDK's attempts, instead
 * of holding the request (and a listen stream's lease) until the function's timeout.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS } from '../../lambdas/aws/aws-client-config.ts';
import { lazyS3ResultStore } from '../../lambdas/aws/lazy-s3-result-store.ts';
import { secretsManagerKey } from '../../lambdas/aws/secrets-manager-key.ts';

const ENVIRONMENT = [
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
];
const saved = Object.fromEntries(ENVIRONMENT.map((name) => [name, process.env[name]]));
const servers: Server[] = [];

afterEach(async () => {
  for (const name of ENVIRONMENT) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback endpoint that takes every request and never answers. */
async function hungEndpoint() {
  const seen = { requests: 0 };
  const server = createServer(() => {
    seen.requests++;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('the deployed S3 and Secrets Manager clients', () => {
  it('a result read and a key read from endpoints that never answer fail with a TimeoutError after the SDK attempts', async () => {
    const s3 = await hungEndpoint();
    const secrets = await hungEndpoint();
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: s3.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'example',
    });
    delete process.env.AWS_SESSION_TOKEN;
    // Both reads run at once; each is awaited as settled, so neither rejection goes unhandled.
    const [result, key] = await Promise.allSettled([
      lazyS3ResultStore('results').get('op/result.json'),
      secretsManagerKey('arn:aws:secretsmanager:us-east-1:000000000000:secret:server-key')(),
    ]);
    expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
    expect(key).toMatchObject({ status: 'rejected', reason: { name: 'TimeoutError' } });
    expect(s3.seen.requests).toBe(MAX_ATTEMPTS);
    // The current and previous versions are read together: each call makes its attempts.
    expect(secrets.seen.requests).toBe(2 * MAX_ATTEMPTS);
  }, 45_000);
});
