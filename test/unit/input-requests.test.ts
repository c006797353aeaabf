/**
 * The core of input mid-run over in-memory ports: a question moves the operation to
 * input_required, answers resume exactly the state that asked, and nothing is lost when
 * questions or answers race.
 */
import { describe, expect, it } from 'vitest';
import { INPUT_ERRORS, InputRequestRefused } from '../../lambdas/operations/input-requests.ts';
import { coreHarness, expectOperationError } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool = testTool({ name: 'approve' });
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const sampling = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } };

async function started(capabilities: Record<string, unknown> = { elicitation: {}, sampling: {} }) {
  const h = coreHarness();
  const record = await h.service.start({ ownerId: 'o1', tool, arguments: {}, token: 't1', dialect: 'tasks-2026-07-28', clientCapabilities: capabilities });
  return { ...h, record };
}

async function refusal(promise: Promise<unknown>): Promise<InputRequestRefused> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputRequestRefused);
  return error as InputRequestRefused;
}

describe('input requests', () => {
  it('a question moves the operation to input_required and shows it by its key, never the task token', async () => {
    const { service, record } = await started();
    const asked = await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'tok-1' });
    expect(asked.key).toBe('confirm');
    const current = await service.readCurrent(record);
    expect(current.status).toBe('input_required');
    expect(service.inputs.pending(current)).toEqual({ confirm });
    expect(JSON.stringify(service.inputs.pending(current))).not.toContain('tok-1');
  });

  it('an answer resumes the state with the client result, and the last answer sends the operation back to working', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'b', request: sampling, taskToken: 'tok-b' });
    const first = await service.inputs.answer(record, { a: { result: { action: 'accept', content: { ok: true } } } });
    expect(first).toEqual({ resumed: ['a'], ignored: [], closed: [] });
    let current = await service.readCurrent(record);
    expect(current.status).toBe('input_required');
    expect(Object.keys(service.inputs.pending(current))).toEqual(['b']);
    await service.inputs.answer(record, { b: { result: { role: 'assistant', content: { type: 'text', text: 'hi' } } } });
    current = await service.readCurrent(record);
    expect(current.status).toBe('working');
    expect(engine.taskCalls.map((c) => c.taskToken)).toEqual(['tok-a', 'tok-b']);
    expect(engine.taskCalls[0]!.output).toEqual({ action: 'accept', content: { ok: true } });
  });

  it('answering a key twice delivers the first answer only', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    const answers = await Promise.all([
      service.inputs.answer(record, { a: { result: { action: 'accept' } } }),
      service.inputs.answer(record, { a: { result: { action: 'accept' } } }),
    ]);
    expect(answers.flatMap((a) => a.resumed)).toEqual(['a']);
    expect(engine.taskCalls).toHaveLength(1);
    expect(await service.inputs.answer(record, { a: { result: { action: 'accept' } } })).toEqual({ resumed: [], ignored: ['a'], closed: [] });
  });

  it('a declined elicitation fails the state with Mcp.InputDeclined, and an error response with Mcp.InputError', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'b', request: confirm, taskToken: 'tok-b' });
    await service.inputs.answer(record, { a: { result: { action: 'decline' } }, b: { error: { code: -32601, message: 'no' } } });
    expect(engine.taskCalls.map((c) => c.failure?.error)).toEqual([INPUT_ERRORS.declined, INPUT_ERRORS.error]);
  });

  it('questions asked at once (a Parallel state) are all kept', async () => {
    const { service, record } = await started();
    await Promise.all(
      ['a', 'b', 'c', 'd'].map((key) =>
        service.inputs.ask({ operation: record, executionName: record.executionName, key, request: confirm, taskToken: `tok-${key}` }),
      ),
    );
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record))).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keys are unique over the operation life: a reused key gets a suffix, and a missing one is minted', async () => {
    const { service, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-1' });
    await service.inputs.answer(record, { a: { result: { action: 'accept' } } });
    const again = await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-2' });
    expect(again.key).toBe('a-2');
    const minted = await service.inputs.ask({ operation: record, executionName: record.executionName, request: confirm, taskToken: 'tok-3' });
    expect(minted.key).toMatch(/^input-[A-Za-z0-9_-]{22}$/);
  });

  it('a request kind the client did not declare is refused with Mcp.CapabilityMissing', async () => {
    const { service, record } = await started({ sampling: {} });
    const refused = await refusal(service.inputs.ask({ operation: record, executionName: record.executionName, request: confirm, taskToken: 'tok' }));
    expect(refused.errorName).toBe(INPUT_ERRORS.capabilityMissing);
    expect(refused.message).toContain('elicitation');
  });

  it('URL-mode elicitation needs the url capability; an empty elicitation capability means form mode', async () => {
    const { service, record } = await started({ elicitation: {} });
    const url = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com', elicitationId: 'e1' } };
    expect((await refusal(service.inputs.ask({ operation: record, executionName: record.executionName, request: url, taskToken: 't' }))).errorName).toBe(
      INPUT_ERRORS.capabilityMissing,
    );
  });

  it('something that is not a server-to-client request is refused with Mcp.InvalidInputRequest', async () => {
    const { service, record } = await started();
    const refused = await refusal(
      service.inputs.ask({ operation: record, executionName: record.executionName, request: { method: 'tools/call', params: {} }, taskToken: 't' }),
    );
    expect(refused.errorName).toBe(INPUT_ERRORS.invalidRequest);
  });

  it('a question from another execution, or for a canceled operation, is refused with Mcp.OperationEnded', async () => {
    const { service, record } = await started();
    expect((await refusal(service.inputs.ask({ operation: record, executionName: 'op-other', request: confirm, taskToken: 't' }))).errorName).toBe(
      INPUT_ERRORS.operationEnded,
    );
    await service.cancel(record);
    expect((await refusal(service.inputs.ask({ operation: record, executionName: record.executionName, request: confirm, taskToken: 't' }))).errorName).toBe(
      INPUT_ERRORS.operationEnded,
    );
  });

  it('an answer of the wrong shape is refused naming its field, and nothing is delivered', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    const error = await expectOperationError(service.inputs.answer(record, { a: { result: { action: 'maybe' } } }), 'INVALID_INPUT');
    expect(error.message).toContain('inputResponses.a.action');
    expect(engine.taskCalls).toHaveLength(0);
  });

  it('a state that stopped waiting (timed out) voids its question: the answer is ignored and the question removed', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    engine.endedTasks.add('tok-a');
    expect(await service.inputs.answer(record, { a: { result: { action: 'accept' } } })).toEqual({
      resumed: [],
      ignored: [],
      closed: [{ key: 'a', reason: 'ended' }],
    });
    expect((await service.readCurrent(record)).status).toBe('working');
  });

  it('an answer the engine did not take (a transient error) leaves the question open for another try', async () => {
    const { service, engine, record } = await started();
    await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'a', request: confirm, taskToken: 'tok-a' });
    engine.failNextTaskCallWith = new Error('throttled');
    await expectOperationError(service.inputs.answer(record, { a: { result: { action: 'accept' } } }), 'INTERNAL');
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record)))).toEqual(['a']);
    expect(await service.inputs.answer(record, { a: { result: { action: 'accept' } } })).toEqual({ resumed: ['a'], ignored: [], closed: [] });
  });

  it('the execution input tells the machine what the client can answer', async () => {
    const { engine, record } = await started({ sampling: {}, experimental: {} });
    const execution = engine.executions.get(record.executionArn!)!;
    expect((execution.input as { operation: Record<string, unknown> }).operation.clientCapabilities).toEqual({ sampling: {} });
  });
});
