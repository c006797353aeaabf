/**
 * One request never outlives its Lambda: a waited-on 2026-07-28 `tools/call` whose run asks
 * a question that the call's own inputResponses answer goes on in a nested round, and every
 * round of the request shares one absolute deadline. The function's timeout is derived from
 * the same bound.
 */
import { describe, expect, it } from 'vitest';
import type { McpDeps } from '../../lambdas/mcp/dialects/dialect.ts';
import { runRound } from '../../lambdas/mcp/input/input-responses.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { REQUEST_MARGIN_SECONDS, requestTimeoutSeconds } from '../../lambdas/operations/operations-limits.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const confirm = { method: 'elicitation/create', params: { message: 'Go on?', requestedSchema: { type: 'object', properties: {} } } };
const BOUND_SECONDS = 1;
const tool = testTool({ name: 'approve', invocation: 'both', timing: { ...testTool({ name: 'x' }).timing, syncTimeoutSeconds: BOUND_SECONDS } });

/** A service on real time whose executions ask `confirm` `askAfterMs` after they start, and then never end. */
function askingStack(askAfterMs: number) {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const logger = memoryLogger();
  const service = createOperations({ store, engine, limits: { ...TEST_LIMITS, maxBlockingSeconds: 30 }, logger, input: mcpInputProtocol });
  const timers: NodeJS.Timeout[] = [];
  const start = engine.start.bind(engine);
  engine.start = async (input) => {
    const started = await start(input);
    const record = (await store.listByOwner('o', { limit: 10 })).items.find((r) => r.executionName === input.name)!;
    timers.push(
      setTimeout(() => {
        void service.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'tok-1' });
      }, askAfterMs),
    );
    return started;
  };
  const deps = { operations: service, logger } as unknown as McpDeps;
  return { service, engine, deps, close: () => timers.forEach(clearTimeout) };
}

describe('one deadline per request', () => {
  it('a call whose own inputResponses answer its run’s question is stopped at its bound, not at a fresh bound in the nested round', async () => {
    const stack = askingStack(700);
    try {
      const began = Date.now();
      const step = await runRound(
        { ownerId: 'o', tool, arguments: {}, dialect: 'sync', atBound: 'stop', onQuestion: 'return', clientCapabilities: { elicitation: {} } },
        stack.deps,
        { confirm: { result: { action: 'accept', content: {} } } },
      );
      const elapsed = Date.now() - began;
      // The answer was delivered: the nested round ran.
      expect(stack.engine.taskCalls).toHaveLength(1);
      expect(step).toMatchObject({ kind: 'finished', outcome: { kind: 'tool-error', error: 'SyncTimeout' } });
      // One bound (1 s) plus the stop, not 0.7 s + settle + a second full bound.
      expect(elapsed).toBeLessThan(BOUND_SECONDS * 1000 + 300);
    } finally {
      stack.close();
    }
  });

  it('a deadline given by the request counts what it did before its first round', async () => {
    const stack = askingStack(60_000);
    try {
      const began = Date.now();
      const step = await runRound(
        { ownerId: 'o', tool, arguments: {}, dialect: 'sync', atBound: 'stop', onQuestion: 'return', deadline: began + 300 },
        stack.deps,
      );
      expect(step.kind).toBe('finished');
      expect(Date.now() - began).toBeLessThan(800);
    } finally {
      stack.close();
    }
  });

  it('the MCP function’s timeout is the blocking bound plus the margin the stop at the bound needs', () => {
    expect(REQUEST_MARGIN_SECONDS).toBeGreaterThan(0);
    expect(requestTimeoutSeconds(60)).toBe(60 + REQUEST_MARGIN_SECONDS);
  });
});
