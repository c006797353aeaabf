/**
 * A question whose `.waitForTaskToken` state stopped waiting without its answer (timed out,
 * went down a Catch path, or was left behind by the run) is no longer shown as open, and a
 * late answer to it is told so instead of being acknowledged and dropped. Step Functions
 * sends no event when such a state times out, so the question carries its deadline.
 * Core over in-memory ports, the request-input worker, and the loader's injection.
 */
import { describe, expect, it } from 'vitest';
import { inputDeadline } from '../../lambdas/operations/input-requests.ts';
import { injectRequestInputContext } from '../../lambdas/tools/request-input-states.ts';
import { withOperations } from '../../lambdas/workers/built-in-scope.ts';
import { createRequestInputHandler } from '../../lambdas/workers/request-input-worker.ts';
import { coreHarness } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool = testTool({ name: 'approve' });
const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const accept = { result: { action: 'accept', content: { secret: 'the-users-answer' } } };

async function started() {
  const h = coreHarness();
  const record = await h.service.start({
    ownerId: 'o1',
    tool,
    arguments: {},
    token: 't1',
    dialect: 'tasks-2026-07-28',
    clientCapabilities: { elicitation: {} },
  });
  const ask = (key: string, extra: { deadline?: number; concurrent?: boolean } = {}) =>
    h.service.inputs.ask({ operation: record, executionName: record.executionName, key, request: confirm, taskToken: `tok-${key}`, ...extra });
  return { ...h, record, ask };
}

describe('a question past its deadline', () => {
  it('is no longer shown once its deadline passes, and the operation reads as working', async () => {
    const { service, clock, record, ask } = await started();
    await ask('confirm', { deadline: clock.now() + 2_000, concurrent: false });
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record)))).toEqual(['confirm']);
    clock.advance(2);
    const current = await service.readCurrent(record);
    expect(service.inputs.pending(current)).toEqual({});
  });

  it('keeps the other questions that still wait: only the timed-out one goes', async () => {
    const { service, clock, record, ask } = await started();
    await ask('soon', { deadline: clock.now() + 1_000, concurrent: true });
    await ask('later', { deadline: clock.now() + 60_000, concurrent: true });
    await ask('never', { concurrent: true });
    clock.advance(5);
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record))).sort()).toEqual(['later', 'never']);
  });

  it('a late answer is not delivered: it is reported closed (timed-out), logged without its content, and the record remembers it', async () => {
    const { service, engine, clock, logger, record, ask } = await started();
    await ask('confirm', { deadline: clock.now() + 2_000, concurrent: false });
    clock.advance(3);
    expect(await service.inputs.answer(record, { confirm: accept })).toEqual({ resumed: [], ignored: [], closed: [{ key: 'confirm', reason: 'timed-out' }] });
    expect(engine.taskCalls).toHaveLength(0);
    const current = await service.readCurrent(record);
    expect(current.status).toBe('working');
    expect(current.pendingInputs).toBeUndefined();
    expect(current.closedInputs?.confirm?.reason).toBe('timed-out');
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'warn', fields: { inputKey: 'confirm', reason: 'timed-out' } }));
    expect(JSON.stringify(logger.lines)).not.toContain('the-users-answer');
    // Asked again, it stays closed.
    expect((await service.inputs.answer(record, { confirm: accept })).closed).toEqual([{ key: 'confirm', reason: 'timed-out' }]);
  });

  it('the next question closes it on the record, and does not count it against the pending limit', async () => {
    const { service, clock, record, ask } = await started();
    await ask('first', { deadline: clock.now() + 1_000, concurrent: true });
    clock.advance(2);
    await ask('second', { concurrent: true });
    const current = await service.readCurrent(record);
    expect(Object.keys(current.pendingInputs ?? {})).toEqual(['second']);
    expect(current.closedInputs?.first?.reason).toBe('timed-out');
  });

  it('inputDeadline is the sooner of TimeoutSeconds and HeartbeatSeconds from when the state was entered; none without either', () => {
    expect(inputDeadline(1_000, 30, undefined)).toBe(31_000);
    expect(inputDeadline(1_000, 30, 5)).toBe(6_000);
    expect(inputDeadline(1_000, undefined, 5)).toBe(6_000);
    expect(inputDeadline(1_000, undefined, undefined)).toBeUndefined();
    expect(inputDeadline(1_000, 0, -1)).toBeUndefined();
  });
});

describe('a question whose state ended some other way', () => {
  it('a state that runs alone is over once the execution asks again (a retry, or the Catch path asks): its question is withdrawn', async () => {
    const { service, record, ask } = await started();
    await ask('confirm', { concurrent: false });
    await ask('after-catch', { concurrent: false });
    const current = await service.readCurrent(record);
    expect(Object.keys(service.inputs.pending(current))).toEqual(['after-catch']);
    expect(current.closedInputs?.confirm?.reason).toBe('ended');
    expect((await service.inputs.answer(record, { confirm: accept })).closed).toEqual([{ key: 'confirm', reason: 'ended' }]);
  });

  it('a question asked before deadlines were stored (no concurrent flag) is never withdrawn by guess', async () => {
    const { service, record, ask } = await started();
    await ask('old');
    await ask('new', { concurrent: true });
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record)))).toEqual(['old', 'new']);
  });

  it('SendTaskSuccess answering TaskTimedOut / TaskDoesNotExist withdraws the question, and a second try is told it closed', async () => {
    const { service, engine, record, ask } = await started();
    await ask('confirm', { concurrent: false });
    engine.endedTasks.add('tok-confirm');
    expect((await service.inputs.answer(record, { confirm: accept })).closed).toEqual([{ key: 'confirm', reason: 'ended' }]);
    const current = await service.readCurrent(record);
    expect(current.status).toBe('working');
    expect((await service.inputs.answer(record, { confirm: accept })).closed).toEqual([{ key: 'confirm', reason: 'ended' }]);
  });

  it('an answer that came after the operation ended, to a question still on the record, is told it closed', async () => {
    const { service, store, record, ask } = await started();
    await ask('confirm');
    const current = await service.readCurrent(record);
    await store.transition(record, ['input_required'], { status: 'canceled', updatedAt: current.updatedAt + 1 });
    expect((await service.inputs.answer(record, { confirm: accept })).closed).toEqual([{ key: 'confirm', reason: 'ended' }]);
  });

  it('the end of the run clears its questions; an answer to one nobody answered is told the run ended, a repeat of one that was answered is only ignored', async () => {
    const { service, store, record, ask } = await started();
    await ask('answered', { concurrent: true });
    await ask('unanswered', { concurrent: true });
    expect((await service.inputs.answer(record, { answered: accept })).resumed).toEqual(['answered']);
    const current = await service.readCurrent(record);
    // What every terminal transition writes: the pending questions go.
    await store.transition(record, [current.status], { status: 'completed', pendingInputs: undefined, updatedAt: current.updatedAt + 1 });
    expect(await service.inputs.answer(record, { unanswered: accept, answered: accept, never: accept })).toEqual({
      resumed: [],
      ignored: ['answered', 'never'],
      closed: [{ key: 'unanswered', reason: 'ended' }],
    });
  });

  it('a second answer to a question answered already is still only ignored, and an answer of another principal names nothing', async () => {
    const { service, record, ask } = await started();
    await ask('confirm');
    expect((await service.inputs.answer(record, { confirm: accept })).resumed).toEqual(['confirm']);
    expect(await service.inputs.answer(record, { confirm: accept })).toEqual({ resumed: [], ignored: ['confirm'], closed: [] });
    expect(await service.inputs.answer({ ownerId: 'o2', token: record.token }, { confirm: accept })).toEqual({ resumed: [], ignored: ['confirm'], closed: [] });
  });
});

describe('the request-input worker', () => {
  it("stores the deadline from the state's entry time and the sooner of its timeouts, and whether it runs alone", async () => {
    const { service, clock, record } = await started();
    const handler = createRequestInputHandler(() => service);
    const enteredTime = new Date(clock.now() - 500).toISOString();
    await withOperations(service, () =>
      handler({
        taskToken: 'tok-1',
        key: 'confirm',
        request: confirm,
        executionName: record.executionName,
        operation: { ownerId: record.ownerId, token: record.token },
        asking: { enteredTime, timeoutSeconds: 300, heartbeatSeconds: 2, concurrent: false },
      }),
    );
    const entry = (await service.readCurrent(record)).pendingInputs!.confirm!;
    expect(entry.deadline).toBe(Date.parse(enteredTime) + 2_000);
    expect(entry.concurrent).toBe(false);
  });

  it('a retried attempt (RetryCount > 0 keeps the first EnteredTime) is dated from when the worker runs, not from the first attempt', async () => {
    const { service, record } = await started();
    const handler = createRequestInputHandler(() => service);
    const firstAttempt = new Date(Date.now() - 60_000).toISOString();
    const before = Date.now();
    await withOperations(service, () =>
      handler({
        taskToken: 'tok-2',
        key: 'confirm',
        request: confirm,
        executionName: record.executionName,
        operation: { ownerId: record.ownerId, token: record.token },
        asking: { enteredTime: firstAttempt, retryCount: 1, timeoutSeconds: 30, concurrent: false },
      }),
    );
    expect((await service.readCurrent(record)).pendingInputs!.confirm!.deadline).toBeGreaterThanOrEqual(before + 30_000);
  });

  it('a state without timeouts, or an event without `asking`, asks without a deadline', async () => {
    const { service, record } = await started();
    const handler = createRequestInputHandler(() => service);
    const base = { request: confirm, executionName: record.executionName, operation: { ownerId: record.ownerId, token: record.token } };
    await withOperations(service, async () => {
      await handler({ ...base, taskToken: 'tok-1', key: 'a', asking: { enteredTime: new Date().toISOString(), concurrent: true } });
      await handler({ ...base, taskToken: 'tok-2', key: 'b', asking: { enteredTime: 'not a time', timeoutSeconds: 'soon' } });
      await handler({ ...base, taskToken: 'tok-3', key: 'c' });
    });
    const pending = (await service.readCurrent(record)).pendingInputs!;
    expect([pending.a?.deadline, pending.b?.deadline, pending.c?.deadline]).toEqual([undefined, undefined, undefined]);
    expect(pending.a?.concurrent).toBe(true);
  });
});

describe('the loader adds what dates a question', () => {
  const WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
  const jsonPathAsk = (extra: Record<string, unknown>) => ({
    Type: 'Task',
    Resource: WAIT,
    Parameters: { FunctionName: '${Worker_request_input}', Payload: { 'taskToken.$': '$$.Task.Token', request: confirm } },
    End: true,
    ...extra,
  });
  const asking = (definition: unknown, path: string[]) => {
    let node = definition as Record<string, unknown>;
    for (const step of path) node = node[step] as Record<string, unknown>;
    return ((node.Parameters ?? node.Arguments) as { Payload: { asking: unknown } }).Payload.asking;
  };

  it('JSONPath: the entry time, TimeoutSeconds and HeartbeatSeconds as written (numbers or ...Path), and concurrent false for a state that runs alone', () => {
    const literal = injectRequestInputContext({ StartAt: 'Ask', States: { Ask: jsonPathAsk({ TimeoutSeconds: 2, HeartbeatSeconds: 1 }) } }, { envelope: true });
    expect(asking(literal.definition, ['States', 'Ask'])).toEqual({
      'enteredTime.$': '$$.State.EnteredTime',
      'retryCount.$': '$$.State.RetryCount',
      'stateName.$': '$$.State.Name',
      timeoutSeconds: 2,
      heartbeatSeconds: 1,
      concurrent: false,
    });
    const paths = injectRequestInputContext(
      { StartAt: 'Ask', States: { Ask: jsonPathAsk({ TimeoutSecondsPath: '$.wait', HeartbeatSecondsPath: '$.beat' }) } },
      { envelope: true },
    );
    expect(asking(paths.definition, ['States', 'Ask'])).toEqual({
      'enteredTime.$': '$$.State.EnteredTime',
      'retryCount.$': '$$.State.RetryCount',
      'stateName.$': '$$.State.Name',
      'timeoutSeconds.$': '$.wait',
      'heartbeatSeconds.$': '$.beat',
      concurrent: false,
    });
  });

  it('JSONata: the same fields as expressions, and concurrent true inside a Parallel branch or a Map', () => {
    const ask = {
      Type: 'Task',
      Resource: WAIT,
      Arguments: { FunctionName: '${Worker_request_input}', Payload: { taskToken: '{% $states.context.Task.Token %}', request: confirm } },
      TimeoutSeconds: '{% $states.input.wait %}',
      End: true,
    };
    const definition = {
      QueryLanguage: 'JSONata',
      StartAt: 'Both',
      States: {
        Both: { Type: 'Parallel', Branches: [{ StartAt: 'Ask', States: { Ask: ask } }], Next: 'Each' },
        Each: { Type: 'Map', ItemProcessor: { StartAt: 'PerItem', States: { PerItem: structuredClone(ask) } }, End: true },
      },
    };
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result.problems).toEqual([]);
    const expected = {
      enteredTime: '{% $states.context.State.EnteredTime %}',
      retryCount: '{% $states.context.State.RetryCount %}',
      stateName: '{% $states.context.State.Name %}',
      timeoutSeconds: '{% $states.input.wait %}',
      concurrent: true,
    };
    expect(asking(result.definition, ['States', 'Both', 'Branches', '0', 'States', 'Ask'])).toEqual(expected);
    expect(asking(result.definition, ['States', 'Each', 'ItemProcessor', 'States', 'PerItem'])).toEqual(expected);
  });

  it('a Payload that sets asking itself is refused: the loader writes it', () => {
    const result = injectRequestInputContext(
      {
        StartAt: 'Ask',
        States: {
          Ask: jsonPathAsk({
            Parameters: { FunctionName: '${Worker_request_input}', Payload: { 'taskToken.$': '$$.Task.Token', request: confirm, asking: {} } },
          }),
        },
      },
      { envelope: true },
    );
    expect(result.problems).toEqual([expect.stringContaining('the Payload sets asking, which the loader adds')]);
  });
});
