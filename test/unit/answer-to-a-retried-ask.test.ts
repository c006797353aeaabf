/**
 * The request-input worker over the core (in-memory ports): a question is stored and visible,
 * but its event cannot be handed on, so its attempt fails with Mcp.AskFailed and the state
 * retries under a new task token. An answer that comes in between reaches the failed
 * attempt's token, whose state no longer waits: it is kept for the retried attempt.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryEventHandover } from '../../lambdas/events/in-memory-event-handover.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { withEventRecording } from '../../lambdas/mcp/events/event-recording.ts';
import { createRequestInputHandler } from '../../lambdas/workers/request-input-worker.ts';
import { memoryLogger } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { startTestOperation } from '../support/start-test-operation.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const cancel = { method: 'elicitation/create', params: { message: 'Cancel the deploy?', requestedSchema: { type: 'object', properties: {} } } };
const accepted = { result: { action: 'accept', content: {} } };

/** Step Functions as the retry races the answer: `beforeTaskCall` runs while the answer is being delivered. */
class RacingEngine extends FakeWorkflowEngine {
  beforeTaskCall?: () => Promise<unknown>;

  override async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    const before = this.beforeTaskCall;
    this.beforeTaskCall = undefined;
    await before?.();
    return super.sendTaskSuccess(taskToken, output);
  }
}

async function askingOperation() {
  let handOverFails = 1;
  const logger = memoryLogger();
  const store = withEventRecording(new InMemoryRecordStore(), {
    log: new InMemoryEventLog(),
    handover: new InMemoryEventHandover(),
    settings: { enabled: true, retentionHours: 24 },
    logger,
    onAppended: async () => {
      if (handOverFails-- > 0) throw Object.assign(new Error('Service is unavailable.'), { name: 'ServiceUnavailable' });
      return 1;
    },
  });
  const engine = new RacingEngine();
  const { service, record } = await startTestOperation(
    { store, engine, logger },
    { tool: testTool({ name: 'approve' }), clientCapabilities: { elicitation: {} } },
  );
  const ask = createRequestInputHandler(() => service);
  const enteredTime = new Date().toISOString();
  const attempt = (taskToken: string, retryCount: number, request: unknown = confirm) =>
    ask({
      taskToken,
      key: 'confirm',
      request,
      executionName: record.executionName,
      operation: { ownerId: record.ownerId, token: record.token },
      asking: { enteredTime, retryCount, concurrent: false, stateName: 'Confirm' },
    });
  await expect(attempt('attempt-1', 0)).rejects.toMatchObject({ name: 'Mcp.AskFailed' });
  // The failed attempt's state no longer waits: Step Functions runs the retry under a new token.
  engine.endedTasks.add('attempt-1');
  return { service, record, engine, attempt };
}

describe('an answer to a question whose ask is being retried', () => {
  it('an answer given while its ask is being retried reaches the retried attempt, and the question is asked once', async () => {
    const { service, record, engine, attempt } = await askingOperation();
    expect(Object.keys(service.inputs.pending(await service.readLive(record)))).toEqual(['confirm']);

    const outcome = await service.inputs.answer(record, { confirm: accepted });
    expect(outcome).toEqual({ resumed: ['confirm'], ignored: [], closed: [] });
    // Answered: not shown again while the retry is on its way.
    expect(service.inputs.pending(await service.readLive(record))).toEqual({});

    expect(await attempt('attempt-2', 1)).toEqual({ key: 'confirm' });
    expect(engine.taskCalls.filter((call) => call.taskToken === 'attempt-2')).toEqual([{ taskToken: 'attempt-2', output: accepted.result }]);
    const after = await service.readLive(record);
    expect(after.usedInputKeys).toEqual(['confirm']);
    expect(after.pendingInputs ?? {}).toEqual({});
    expect(after.status).toBe('working');
  });

  it('a retry that asks while the answer is on its way to the failed attempt takes the question over and gets the answer: asked once', async () => {
    const { service, record, engine, attempt } = await askingOperation();
    let retried: unknown;
    engine.beforeTaskCall = async () => {
      retried = await attempt('attempt-2', 1);
    };

    expect((await service.inputs.answer(record, { confirm: accepted })).resumed).toEqual(['confirm']);
    expect(retried).toEqual({ key: 'confirm' });
    expect(engine.taskCalls).toEqual([{ taskToken: 'attempt-2', output: accepted.result }]);
    const after = await service.readLive(record);
    expect(after.usedInputKeys).toEqual(['confirm']);
    expect(after.pendingInputs ?? {}).toEqual({});
  });

  it('a retry that asks a different question is asked it, and the kept answer is not given to it', async () => {
    const { service, record, engine, attempt } = await askingOperation();
    await service.inputs.answer(record, { confirm: accepted });

    expect(await attempt('attempt-2', 1, cancel)).toEqual({ key: 'confirm-2' });
    expect(engine.taskCalls.filter((call) => call.taskToken === 'attempt-2')).toEqual([]);
    expect(service.inputs.pending(await service.readLive(record))).toEqual({ 'confirm-2': cancel });
  });

  it('an answer to a question of an operation that has ended is told the question closed, and nothing is kept', async () => {
    const { service, record, attempt } = await askingOperation();
    await service.cancel(record);

    const outcome = await service.inputs.answer(record, { confirm: accepted });
    expect(outcome.resumed).toEqual([]);
    await expect(attempt('attempt-2', 1)).rejects.toMatchObject({ name: 'Mcp.OperationEnded' });
  });
});
