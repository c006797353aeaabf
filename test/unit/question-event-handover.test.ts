/**
 * The request-input worker over the core with event recording (in-memory ports): a question
 * whose event cannot be handed to webhook delivery fails its state with Mcp.AskFailed, which
 * the state retries, and the retried attempt keeps the one question and hands its event on.
 */
import { describe, expect, it } from 'vitest';
import type { EventEntry } from '../../lambdas/events/event-log.ts';
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

describe('request-input worker, event hand-over', () => {
  it('a question whose webhook hand-over fails is asked again by the retried state: one question, its event handed on', async () => {
    const handed: EventEntry[] = [];
    let enqueueFails = 1;
    const logger = memoryLogger();
    const store = withEventRecording(new InMemoryRecordStore(), {
      log: new InMemoryEventLog(),
      handover: new InMemoryEventHandover(),
      settings: { enabled: true, retentionHours: 24 },
      logger,
      onAppended: async (entry) => {
        if (enqueueFails-- > 0) throw Object.assign(new Error('Service is unavailable.'), { name: 'ServiceUnavailable' });
        handed.push(entry);
        return 1;
      },
    });
    const { service, record } = await startTestOperation(
      { store, engine: new FakeWorkflowEngine(), logger },
      { tool: testTool({ name: 'approve' }), clientCapabilities: { elicitation: {} } },
    );
    const ask = createRequestInputHandler(() => service);
    const attempt = (taskToken: string, retryCount: number) =>
      ask({
        taskToken,
        key: 'approval',
        request: confirm,
        executionName: record.executionName,
        operation: { ownerId: record.ownerId, token: record.token },
        asking: { enteredTime: new Date().toISOString(), retryCount, concurrent: false, stateName: 'Approve' },
      });

    await expect(attempt('attempt-1', 0)).rejects.toMatchObject({ name: 'Mcp.AskFailed' });
    expect(await attempt('attempt-2', 1)).toEqual({ key: 'approval' });

    const current = await service.readLive(record);
    expect(Object.keys(current.pendingInputs ?? {})).toEqual(['approval']);
    expect(current.pendingInputs?.approval?.taskToken).toBe('attempt-2');
    expect(handed.map((entry) => [entry.name, Object.keys(entry.data.inputRequests as object)])).toEqual([['operation.input_required', ['approval']]]);
  });
});
