/**
 * The durable-function engine over the local durable service, for a whole test file: started
 * before its first test and closed after its last, as the engine's contract tests share it.
 */
import { afterAll, beforeAll } from 'vitest';
import { DurableFunctionEngine } from '../../lambdas/aws/durable-function-engine.ts';
import { type DurableHarness, startDurableHarness } from '../local/durable-harness.ts';

export interface DurableEngineFixture {
  /** The local durable service and the unmodified LambdaClient on it. */
  harness: DurableHarness;
  engine: DurableFunctionEngine;
}

/** Registers the file's hooks; the fields are set from its `beforeAll` on. */
export function durableEngineFixture(): DurableEngineFixture {
  const fixture = {} as DurableEngineFixture;
  beforeAll(async () => {
    fixture.harness = await startDurableHarness();
    fixture.engine = new DurableFunctionEngine(fixture.harness.lambda);
  });
  afterAll(async () => {
    await fixture.harness?.close();
  });
  return fixture;
}

/** The ARN the engine starts a test handler of the durable service by. */
export const functionArn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}:$LATEST`;
