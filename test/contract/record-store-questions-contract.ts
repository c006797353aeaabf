/**
 * The RecordStore contract for questions: the core stores them with compare-and-set writes,
 * and asking is idempotent per task token over every store (issue 47, scenario 2): a retried
 * ask returns the key it has and leaves one open question.
 */
import { beforeEach, expect, it } from 'vitest';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';
import { ManualClock, memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';
import { useStore, type MakeStore } from './record-store-fixtures.ts';

const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };

/** The question cases, registered in the enclosing describe. */
export function describeQuestionCases(makeStore: MakeStore): void {
  const current = useStore(makeStore);
  let service: OperationsService;
  let store: RecordStore;
  let record: OperationRecord;
  let engine: FakeWorkflowEngine;
  beforeEach(async () => {
    store = current();
    engine = new FakeWorkflowEngine();
    service = createOperations({
      store,
      engine,
      limits: TEST_LIMITS,
      clock: new ManualClock(),
      logger: memoryLogger(),
      input: mcpInputProtocol,
    });
    const tool = testTool({ name: 'approve' });
    record = await service.start({
      ownerId: 'owner-q',
      tool,
      arguments: {},
      token: 'q1',
      dialect: 'tasks-2026-07-28',
      clientCapabilities: { elicitation: {} },
    });
  });
  const ask = (taskToken: string, extra: Record<string, unknown> = {}) =>
    service.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken, ...extra });
  const stored = async () => {
    const found = await store.get(record);
    if (!found) throw new Error('the record is gone');
    return found;
  };

  it('a question asked again with a task token already pending keeps its key and stays one open question', async () => {
    const deadline = record.createdAt + 60_000;
    expect((await ask('callback-1', { deadline })).key).toBe('confirm');
    expect((await ask('callback-1', { deadline: deadline + 5_000 })).key).toBe('confirm');
    const after = await stored();
    expect(after.pendingInputs?.confirm?.deadline).toBe(deadline);
    expect(Object.keys(after.pendingInputs ?? {})).toEqual(['confirm']);
    expect(after.usedInputKeys).toEqual(['confirm']);
    expect(service.inputs.pending(after)).toEqual({ confirm });
  });

  it('asks with the same task token at once store one question under one key', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => ask('callback-1')));
    expect(new Set(keys.map(({ key }) => key))).toEqual(new Set(['confirm']));
    expect(Object.keys((await stored()).pendingInputs ?? {})).toEqual(['confirm']);
  });

  it('a retried attempt of a state that runs alone takes over its question: the same key, the new task token', async () => {
    const first = await ask('attempt-1', { concurrent: false, state: 'Approve' });
    const retried = await ask('attempt-2', { concurrent: false, state: 'Approve', retried: true });
    expect(retried.key).toBe(first.key);
    const after = await stored();
    expect(Object.keys(after.pendingInputs ?? {})).toEqual(['confirm']);
    expect(after.pendingInputs?.confirm?.taskToken).toBe('attempt-2');
    expect(after.closedInputs).toBeUndefined();
  });

  it('a retried attempt inside a Map iteration takes over its own question, not the one another iteration asked under the same key', async () => {
    const enteredAt = record.createdAt + 1_000;
    const item = (n: number) => ({ ...confirm, params: { ...confirm.params, message: `Deploy item ${n}?` } });
    const inMap = { concurrent: true, state: 'ConfirmItem' };
    expect((await ask('item-0-attempt-1', { ...inMap, enteredAt, request: item(0) })).key).toBe('confirm');
    expect((await ask('item-1-attempt-1', { ...inMap, enteredAt: enteredAt + 2, request: item(1) })).key).toBe('confirm-2');
    // Iterations entered in the same millisecond are told apart by what they ask.
    expect((await ask('item-2-attempt-1', { ...inMap, enteredAt, request: item(2) })).key).toBe('confirm-3');
    const retried = await ask('item-0-attempt-2', { ...inMap, enteredAt, request: item(0), retried: true });
    expect(retried.key).toBe('confirm');
    const after = await stored();
    expect(Object.keys(after.pendingInputs ?? {}).sort()).toEqual(['confirm', 'confirm-2', 'confirm-3']);
    expect(after.pendingInputs?.confirm?.taskToken).toBe('item-0-attempt-2');
    expect(after.pendingInputs?.['confirm-2']?.taskToken).toBe('item-1-attempt-1');
    expect(after.pendingInputs?.['confirm-3']?.taskToken).toBe('item-2-attempt-1');
    expect(after.usedInputKeys).toEqual(['confirm', 'confirm-2', 'confirm-3']);
  });

  it("a retried attempt inside a Parallel branch takes over its branch's question, and two branches asking one key keep two questions", async () => {
    const enteredAt = record.createdAt + 1_000;
    expect((await ask('left-1', { concurrent: true, state: 'AskLeft', enteredAt })).key).toBe('confirm');
    expect((await ask('right-1', { concurrent: true, state: 'AskRight', enteredAt })).key).toBe('confirm-2');
    expect((await ask('right-2', { concurrent: true, state: 'AskRight', enteredAt, retried: true })).key).toBe('confirm-2');
    const after = await stored();
    expect(Object.keys(after.pendingInputs ?? {}).sort()).toEqual(['confirm', 'confirm-2']);
    expect(after.pendingInputs?.confirm?.taskToken).toBe('left-1');
    expect(after.pendingInputs?.['confirm-2']?.taskToken).toBe('right-2');
    expect(after.closedInputs).toBeUndefined();
  });

  it("a retry that cannot tell its iteration's question from another one (entered at once, the same question) asks under a new key rather than take one over", async () => {
    const enteredAt = record.createdAt + 1_000;
    const inMap = { concurrent: true, state: 'ConfirmItem', enteredAt };
    await ask('item-0-attempt-1', inMap);
    await ask('item-1-attempt-1', inMap);
    expect((await ask('item-0-attempt-2', { ...inMap, retried: true })).key).toBe('confirm-3');
    const after = await stored();
    expect(after.pendingInputs?.confirm?.taskToken).toBe('item-0-attempt-1');
    expect(after.pendingInputs?.['confirm-2']?.taskToken).toBe('item-1-attempt-1');
  });

  it('an answer that came while its ask was being retried is kept on the question and resumes the retried attempt: asked once', async () => {
    await ask('attempt-1', { concurrent: false, state: 'Approve' });
    engine.endedTasks.add('attempt-1');
    expect((await service.inputs.answer(record, { confirm: { result: { action: 'accept', content: { sure: true } } } })).resumed).toEqual(['confirm']);
    expect((await stored()).pendingInputs?.confirm?.keptAnswer).toEqual({ kind: 'success', output: { action: 'accept', content: { sure: true } } });
    expect((await ask('attempt-2', { concurrent: false, state: 'Approve', retried: true })).key).toBe('confirm');
    expect(engine.taskCalls.filter(({ taskToken }) => taskToken === 'attempt-2')).toEqual([
      { taskToken: 'attempt-2', output: { action: 'accept', content: { sure: true } } },
    ]);
    const after = await stored();
    expect(after.pendingInputs).toBeUndefined();
    expect(after.usedInputKeys).toEqual(['confirm']);
  });

  it('another question with the same key and a new token is still a second question', async () => {
    await ask('branch-1');
    expect((await ask('branch-2')).key).toBe('confirm-2');
    expect(Object.keys((await stored()).pendingInputs ?? {}).sort()).toEqual(['confirm', 'confirm-2']);
  });
}
