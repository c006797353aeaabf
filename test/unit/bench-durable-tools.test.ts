/**
 * The durable bench compares two tools doing the same work on one local stack, counting the
 * durable function's checkpoint calls by wrapping the SDK's client: the twins must give the
 * same result, and the comparison must print every figure for both and unwrap the client.
 */
import { resolve } from 'node:path';
import { DurableExecutionApiClient } from '@aws/durable-execution-sdk-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printDurableToolComparison } from '../../bench/durable-tools.ts';
import { startLocalStack } from '../../local/local-stack.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const TWINS = resolve(import.meta.dirname, '../../bench/fixtures/durable-twins');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the durable bench', () => {
  it('runs twins that do the same work: the same arguments give the same result from the durable function and the state machine', async () => {
    const stack = await startLocalStack({ toolsDir: TWINS, port: 0 });
    try {
      const results = [];
      for (const name of ['two_steps_durable', 'two_steps_machine']) {
        const { task } = ok(await legacyRequest(stack.url, 'tools/call', { name, arguments: { n: 12, waitSeconds: 1 }, task: {} }));
        await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId: task.taskId }), ['completed', 'failed'], { timeout: 20_000 });
        results.push(ok(await legacyRequest(stack.url, 'tasks/result', { taskId: task.taskId })));
      }
      const [durable, machine] = results.map(({ content, structuredContent }) => ({ content, structuredContent }));
      expect(durable).toEqual({ content: [{ type: 'text', text: '{"result":145}' }], structuredContent: { result: 145 } });
      expect(machine).toEqual(durable);
    } finally {
      await stack.close();
    }
  });

  it("prints the calls, the cost and the latency of both twins, the checkpoints apart, and puts the SDK's client back", async () => {
    const { checkpoint, getExecutionState } = DurableExecutionApiClient.prototype;
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line = '') => void lines.push(String(line)));
    await printDurableToolComparison({ runs: 2 });
    const printed = lines.join('\n');

    for (const tool of ['two_steps_durable', 'two_steps_machine']) {
      expect(printed).toMatch(new RegExp(`${tool} +start \\(tools/call\\) +PutItem 1`));
      expect(printed).toMatch(new RegExp(`${tool} +sync SUCCEEDED`));
      expect(printed).toMatch(new RegExp(`^  ${tool} +p50=\\d+\\.\\dms p95=\\d+\\.\\dms$`, 'm'));
    }
    expect(printed).toMatch(/two_steps_machine +start \(tools\/call\) .*StartExecution 1/);
    expect(printed).toMatch(/two_steps_durable +start \(tools\/call\) .*Invoke 1/);
    // Two steps and a wait, checkpointed from two invocations (before the wait and after it).
    expect(printed).toMatch(/two_steps_durable +checkpoints\* +CheckpointDurableExecution \d+ +2 invocations; 3 durable operations \(STEP 2, WAIT 1\)/);
    expect(printed).toMatch(/durable operations +3 .*\$0\.0240/);
    expect(printed).toMatch(/durable data written .* no price found/);
    expect(DurableExecutionApiClient.prototype.checkpoint).toBe(checkpoint);
    expect(DurableExecutionApiClient.prototype.getExecutionState).toBe(getExecutionState);
  });
});
