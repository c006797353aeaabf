/**
 * The MCP function's Step Functions engine is built on first use, so a poll's cold start
 * does not load the SFN client; once loaded it is the same engine, on the local stack's
 * Step Functions facade.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executionArnFor as arnOfTheEngine } from '../../lambdas/aws/step-functions-engine.ts';
import { lazyStepFunctionsEngine } from '../../lambdas/aws/lazy-step-functions-engine.ts';
import { ExecutionNotFoundError } from '../../lambdas/operations/ports.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const engineOn = (endpoint: string) =>
  lazyStepFunctionsEngine({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, disableHostPrefix: true });

describe('the Step Functions engine loaded on first use', () => {
  it("derives an execution's ARN as the engine does, with no call", () => {
    // An unreachable endpoint: deriving the ARN never reaches for the client.
    const engine = engineOn('http://127.0.0.1:9');
    const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-analyze_dataset';
    expect(engine.executionArnFor(machine, 'run-1')).toBe(arnOfTheEngine(machine, 'run-1'));
    expect(engine.executionArnFor(machine, 'run-1')).toBe('arn:aws:states:us-east-1:000000000000:execution:AsyncMcp-analyze_dataset:run-1');
  });

  it('starts, describes and stops an execution on first use, and names one that never started as not found', async () => {
    const engine = engineOn(stack.sfnEndpoint);
    // Started behind the server's back, the run has no operation: status sync says so of its start and its stop.
    const logs = captureLogs('status event for an execution without an operation');
    const stateMachineArn = stack.catalog.get('analyze_dataset')?.stateMachineArn;
    if (!stateMachineArn) throw new Error('analyze_dataset is not in the catalog');
    const name = `lazy-${Date.now()}`;
    const input = { arguments: { rows: 10 } };
    const { executionArn } = await engine.start({ stateMachineArn, name, input });
    expect(executionArn).toBe(engine.executionArnFor(stateMachineArn, name));
    expect(await engine.describe(executionArn)).toMatchObject({ executionArn, input });
    // Stopping an execution, running or already ended, is not an error.
    await engine.stop(executionArn, { error: 'Test', cause: 'done' });
    await expect(engine.describe(engine.executionArnFor(stateMachineArn, 'never-started'))).rejects.toBeInstanceOf(ExecutionNotFoundError);
    await vi.waitFor(() => expect(logs.entries).toHaveLength(2));
    for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'ERROR', executionArn });
  }, 60_000);
});
