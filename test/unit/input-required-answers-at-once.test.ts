/**
 * SEP-2575 (server-stateless): a waited-on 2026-07-28 `tools/call` whose run asks a question
 * answers with the IncompleteResult on its own response, never with a request of its own.
 * The suite reads that response for 600 ms, so a round that stops at a question asked by a
 * state that runs alone answers at once: nothing else of the execution can ask while it
 * waits. Questions asked inside a Parallel branch or a Map still settle, so the client sees
 * its siblings in the same round.
 */
import { describe, expect, it } from 'vitest';
import type { McpDeps } from '../../lambdas/mcp/dialects/dialect.ts';
import { QUESTION_SETTLE_MS, runRound } from '../../lambdas/mcp/input/input-responses.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const question = (message: string) => ({ method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties: {} } } });
const tool = testTool({ name: 'ask', invocation: 'sync', timing: { ...testTool({ name: 'x' }).timing, syncTimeoutSeconds: 10 } });

interface Ask {
  key: string;
  afterMs: number;
  concurrent: boolean;
}

/** A service on real time whose executions ask `asks` (each `afterMs` after the start), then never end. */
function askingStack(asks: Ask[]) {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const logger = memoryLogger();
  const service = createOperations({ store, engine, limits: { ...TEST_LIMITS, maxBlockingSeconds: 30 }, logger, input: mcpInputProtocol });
  const timers: NodeJS.Timeout[] = [];
  const asked: number[] = [];
  const start = engine.start.bind(engine);
  engine.start = async (input) => {
    const started = await start(input);
    const record = (await store.listByOwner('o', { limit: 10 })).items.find((r) => r.executionName === input.name)!;
    for (const { key, afterMs, concurrent } of asks) {
      timers.push(
        setTimeout(() => {
          void service.inputs
            .ask({ operation: record, executionName: record.executionName, key, request: question(key), taskToken: `tok-${key}`, concurrent })
            .then(() => asked.push(Date.now()));
        }, afterMs),
      );
    }
    return started;
  };
  const deps = { operations: service, logger } as unknown as McpDeps;
  return { deps, asked, close: () => timers.forEach(clearTimeout) };
}

const round = { ownerId: 'o', tool, arguments: {}, dialect: 'sync', atBound: 'stop', onQuestion: 'return', clientCapabilities: { elicitation: {} } } as const;

describe('a round that stops at a question', () => {
  it('Request stream contains only IncompleteResult: a question whose state runs alone comes back at once, without waiting for others', async () => {
    const stack = askingStack([{ key: 'confirm', afterMs: 0, concurrent: false }]);
    try {
      const step = await runRound(round, stack.deps);
      const answeredAt = Date.now();
      expect(step.kind).toBe('input-required');
      expect(Object.keys((step as { record: { pendingInputs: object } }).record.pendingInputs)).toEqual(['confirm']);
      // Before: every round waited QUESTION_SETTLE_MS after it saw the question.
      expect(answeredAt - stack.asked[0]!).toBeLessThan(QUESTION_SETTLE_MS);
    } finally {
      stack.close();
    }
  });

  it('questions of Parallel branches, asked one after another, come back in the same round', async () => {
    const stack = askingStack([
      { key: 'first', afterMs: 0, concurrent: true },
      { key: 'second', afterMs: 150, concurrent: true },
    ]);
    try {
      const step = await runRound(round, stack.deps);
      expect(step.kind).toBe('input-required');
      expect(Object.keys((step as { record: { pendingInputs: object } }).record.pendingInputs).sort()).toEqual(['first', 'second']);
    } finally {
      stack.close();
    }
  });
});
