/**
 * The request-input worker inside a Map (in-memory ports): each iteration asks under the same
 * key, and one iteration's first attempt fails with Mcp.AskFailed after its question was
 * stored (its event could not be handed on). The state's retry, which Step Functions runs
 * under the iteration's first EnteredTime, takes over that iteration's question: the client
 * sees one question per iteration, each of which resumes a waiting state.
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

const confirmItem = (item: string) => ({
  method: 'elicitation/create',
  params: { message: `Deploy ${item}?`, requestedSchema: { type: 'object', properties: {} } },
});

describe('request-input worker in a Map iteration', () => {
  it('a retried ask in a Map iteration takes over the question its failed attempt stored: one question per iteration', async () => {
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
    const { service, record } = await startTestOperation(
      { store, engine: new FakeWorkflowEngine(), logger },
      { tool: testTool({ name: 'approve' }), clientCapabilities: { elicitation: {} } },
    );
    const ask = createRequestInputHandler(() => service);
    // Both iterations entered the asking state in the same millisecond, as a Map's often do.
    const enteredTime = new Date().toISOString();
    const attempt = (item: string, taskToken: string, retryCount: number) =>
      ask({
        taskToken,
        key: 'confirm',
        request: confirmItem(item),
        executionName: record.executionName,
        operation: { ownerId: record.ownerId, token: record.token },
        asking: { enteredTime, retryCount, concurrent: true, stateName: 'ConfirmItem' },
      });

    await expect(attempt('api', 'api-attempt-1', 0)).rejects.toMatchObject({ name: 'Mcp.AskFailed' });
    expect(await attempt('web', 'web-attempt-1', 0)).toEqual({ key: 'confirm-2' });
    expect(await attempt('api', 'api-attempt-2', 1)).toEqual({ key: 'confirm' });

    const current = await service.readLive(record);
    expect(Object.fromEntries(Object.entries(current.pendingInputs ?? {}).map(([key, entry]) => [key, entry.taskToken]))).toEqual({
      confirm: 'api-attempt-2',
      'confirm-2': 'web-attempt-1',
    });
    expect(service.inputs.pending(current)).toEqual({ confirm: confirmItem('api'), 'confirm-2': confirmItem('web') });
  });
});
