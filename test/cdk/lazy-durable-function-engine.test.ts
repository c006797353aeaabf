/**
 * The deployed functions' durable engine is built on first use, so a cold start, a poll and
 * tools/list do not load the Lambda client (test/cdk/bundling.test.ts runs the MCP bundle and
 * reads what it loaded); the ARN it derives with no call is the engine's own.
 */
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { DurableFunctionEngine } from '../../lambdas/aws/durable-function-engine.ts';
import { lazyDurableFunctionEngine } from '../../lambdas/aws/lazy-durable-function-engine.ts';

const aliasArn = 'arn:aws:lambda:us-east-1:123456789012:function:AsyncMcp-count_primes_durable:live';
// An unreachable endpoint, one attempt: a call fails fast, and deriving an ARN never reaches for the client.
const engine = lazyDurableFunctionEngine({
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  maxAttempts: 1,
});

describe('the durable engine loaded on first use', () => {
  it("derives an execution's ARN as the engine does, with no call", () => {
    const loaded = new DurableFunctionEngine({} as LambdaClient);
    expect(engine.executionArnFor(aliasArn, 'op-1')).toBe(loaded.executionArnFor(aliasArn, 'op-1'));
  });

  it('sends a start through the client it builds, with the configuration it was given', async () => {
    await expect(engine.start({ stateMachineArn: aliasArn, name: 'op-1', input: { arguments: {} } })).rejects.toThrow(/ECONNREFUSED|connect/);
  });
});
