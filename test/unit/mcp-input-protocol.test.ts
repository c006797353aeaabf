/**
 * The MCP words for questions live in mcp/input/mcp-input-protocol.ts, and the core reads
 * questions and answers only through its InputProtocol port: the MCP schemas refuse what a
 * state may not ask with the same messages as before, and a core given another protocol
 * asks and answers in that protocol's words alone.
 */
import { describe, expect, it } from 'vitest';
import { inputKindsOf, parseInputAnswer, parseInputRequest } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { InputProtocol } from '../../lambdas/operations/input-protocol.ts';
import { INPUT_ERRORS, InputRequestRefused } from '../../lambdas/operations/input-requests.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { expectOperationError, ManualClock, memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const form = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object' } } };

describe('the MCP input protocol', () => {
  it('keeps only method and params of a request a state may ask, and names the capability it needs', () => {
    expect(parseInputRequest({ ...form, extra: 1 })).toEqual({ ok: true, request: form, kind: 'elicitation.form', capability: 'elicitation' });
    const url = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com', elicitationId: 'e1' } };
    expect(parseInputRequest(url)).toMatchObject({ ok: true, kind: 'elicitation.url', capability: 'elicitation (URL mode)' });
    expect(parseInputRequest({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } })).toMatchObject({ ok: true, kind: 'sampling' });
    expect(parseInputRequest({ method: 'roots/list' })).toEqual({
      ok: true,
      request: { method: 'roots/list', params: {} },
      kind: 'roots',
      capability: 'roots',
    });
  });

  it.each([
    ['x', 'request must be an object with method and params'],
    [{ method: 'roots/list', params: [] }, 'request params must be an object'],
    [{ method: 'tools/call', params: {} }, 'request method must be elicitation/create, sampling/createMessage or roots/list'],
    [{ method: 'elicitation/create', params: { requestedSchema: {} } }, 'request params.message must be a string'],
    [{ method: 'elicitation/create', params: { message: 'm' } }, 'request params.requestedSchema must be an object in form mode'],
    [
      { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'u' } },
      'request params.url and params.elicitationId must be strings in URL mode',
    ],
    [{ method: 'sampling/createMessage', params: { maxTokens: 5 } }, 'request params.messages must be an array'],
    [{ method: 'sampling/createMessage', params: { messages: [] } }, 'request params.maxTokens must be a number'],
  ])('refuses %j: %s', (request, message) => {
    expect(parseInputRequest(request)).toEqual({ ok: false, message });
  });

  it('an answer resumes the state, fails it for its Catch, or names the field of the wrong shape as inputResponses carries it', () => {
    const accept = { action: 'accept', content: { ok: true } };
    expect(parseInputAnswer('k', form, { result: accept })).toEqual({ ok: true, delivery: { kind: 'success', output: accept } });
    expect(parseInputAnswer('k', form, { result: { action: 'cancel', content: 3 } })).toEqual({
      ok: true,
      delivery: { kind: 'failure', error: INPUT_ERRORS.declined, cause: '{"action":"cancel"}' },
    });
    expect(parseInputAnswer('k', form, { error: { code: -1, message: 'no' } })).toMatchObject({
      ok: true,
      delivery: { kind: 'failure', error: INPUT_ERRORS.error },
    });
    expect(parseInputAnswer('k', form, { result: 'yes' })).toEqual({ ok: false, field: 'inputResponses.k', problem: 'must be an object' });
    expect(parseInputAnswer('k', form, { result: { action: 'maybe' } })).toEqual({
      ok: false,
      field: 'inputResponses.k.action',
      problem: 'must be "accept", "decline" or "cancel"',
    });
    expect(parseInputAnswer('k', form, { result: { action: 'accept', content: [] } })).toEqual({
      ok: false,
      field: 'inputResponses.k.content',
      problem: 'must be an object',
    });
    const sampling = { method: 'sampling/createMessage', params: {} };
    expect(parseInputAnswer('s', sampling, { result: { content: {} } })).toEqual({ ok: false, field: 'inputResponses.s.role', problem: 'must be a string' });
    expect(parseInputAnswer('s', sampling, { result: { role: 'assistant', content: 'hi' } })).toEqual({
      ok: false,
      field: 'inputResponses.s.content',
      problem: 'must be a content block',
    });
    expect(parseInputAnswer('r', { method: 'roots/list', params: {} }, { result: { roots: {} } })).toEqual({
      ok: false,
      field: 'inputResponses.r.roots',
      problem: 'must be an array',
    });
  });

  it('an empty elicitation capability is form mode only, as the spec says', () => {
    expect(inputKindsOf({ elicitation: {} })).toEqual(['elicitation.form']);
    expect(inputKindsOf({ elicitation: { url: {} }, sampling: {}, roots: {} })).toEqual(['elicitation.url', 'sampling', 'roots']);
  });
});

describe('a core given another input protocol', () => {
  /** A protocol of one question, `colour/pick`, answered with `{ colour }`. */
  const colours: InputProtocol = {
    capabilitiesOf: (declared) => (declared.colours ? { colours: declared.colours } : {}),
    kindsOf: (capabilities) => (capabilities.colours ? ['colour'] : []),
    parseRequest: (value) =>
      (value as { method?: unknown }).method === 'colour/pick'
        ? { ok: true, request: { method: 'colour/pick', params: {} }, kind: 'colour', capability: 'colours' }
        : { ok: false, message: 'only colour/pick may be asked' },
    parseAnswer: (key, _request, answer) =>
      'result' in answer && typeof (answer.result as { colour?: unknown }).colour === 'string'
        ? { ok: true, delivery: { kind: 'success', output: answer.result } }
        : { ok: false, field: `answers.${key}.colour`, problem: 'must be a string' },
  };

  function core() {
    const engine = new FakeWorkflowEngine();
    const service = createOperations({
      store: new InMemoryRecordStore(),
      engine,
      input: colours,
      limits: TEST_LIMITS,
      clock: new ManualClock(),
      logger: memoryLogger(),
    });
    return { engine, service };
  }

  it('asks, refuses and resumes in that protocol words alone', async () => {
    const { engine, service } = core();
    const record = await service.start({
      ownerId: 'o',
      tool: testTool({ name: 'paint' }),
      arguments: {},
      token: 't',
      dialect: 'tasks-2026-07-28',
      clientCapabilities: { colours: {}, elicitation: {} },
    });
    expect(record.inputKinds).toEqual(['colour']);
    const ask = (request: unknown) => service.inputs.ask({ operation: record, executionName: record.executionName, key: 'c', request, taskToken: 'tok' });
    const refused = await ask(form).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(InputRequestRefused);
    expect((refused as InputRequestRefused).message).toBe('only colour/pick may be asked');
    await ask({ method: 'colour/pick' });
    const wrong = await expectOperationError(service.inputs.answer(record, { c: { result: { colour: 7 } } }), 'INVALID_INPUT');
    expect(wrong.message).toBe('Invalid answers.c.colour: must be a string');
    expect(await service.inputs.answer(record, { c: { result: { colour: 'teal' } } })).toEqual({ resumed: ['c'], ignored: [], closed: [] });
    expect(engine.taskCalls.at(-1)).toEqual({ taskToken: 'tok', output: { colour: 'teal' } });
  });
});

describe('a core built without an input protocol (status sync)', () => {
  it('asks its clients nothing and refuses a question, saying this process takes none', async () => {
    const engine = new FakeWorkflowEngine();
    const service = createOperations({ store: new InMemoryRecordStore(), engine, limits: TEST_LIMITS, clock: new ManualClock(), logger: memoryLogger() });
    const record = await service.start({
      ownerId: 'o',
      tool: testTool({ name: 'paint' }),
      arguments: {},
      token: 't',
      dialect: 'tasks-2026-07-28',
      clientCapabilities: { elicitation: {} },
    });
    expect(record.inputKinds ?? [], 'no kind of question is open to its clients').toEqual([]);
    const refused = await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'c', request: form, taskToken: 'tok' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(InputRequestRefused);
    expect((refused as InputRequestRefused).message).toBe('this process takes no questions');
    expect(engine.taskCalls).toEqual([]);
  });
});
