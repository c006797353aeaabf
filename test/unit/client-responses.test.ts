/**
 * Ids of server-to-client requests and the client's answers to them, over the core with
 * in-memory ports: the id alone routes an answer, the answering principal scopes it, and a
 * wrong-shaped answer is refused with HTTP 400 before anything is delivered.
 */
import { describe, expect, it } from 'vitest';
import { acceptClientResponses, parseClientResponses, type ClientAnswer } from '../../lambdas/mcp/input/client-responses.ts';
import { inputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { INPUT_ERRORS } from '../../lambdas/operations/input-requests.ts';
import { coreHarness, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const confirm = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
const accept = { action: 'accept', content: { comment: 'go' } };

function answers(body: unknown): ClientAnswer[] {
  const parsed = parseClientResponses(body);
  if (!parsed?.ok) throw new Error(`not answers: ${JSON.stringify(parsed)}`);
  return parsed.answers;
}

function refusal(body: unknown): string {
  const parsed = parseClientResponses(body);
  if (parsed?.ok !== false) throw new Error(`not refused: ${JSON.stringify(parsed)}`);
  return parsed.message;
}

async function asking(ownerId = 'owner-1', token = 'tok-1') {
  const h = coreHarness();
  const record = await h.service.start({
    ownerId,
    tool: testTool({ name: 'approve' }),
    arguments: {},
    token,
    dialect: 'sep-1391',
    clientCapabilities: { elicitation: {} },
  });
  await h.service.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'task-token-1' });
  const deps = { catalog: { tools: [], get: () => undefined }, operations: h.service, logger: h.logger, secretKey: TEST_SECRET_KEY };
  return { ...h, record, deps };
}

describe('parsing a POST body as answers', () => {
  const id = inputRequestId('tok-1', 'confirm');

  it('a result or an error to an id of ours is an answer to that question', () => {
    expect(answers({ jsonrpc: '2.0', id, result: accept })).toEqual([{ token: 'tok-1', key: 'confirm', answer: { result: accept } }]);
    expect(answers({ jsonrpc: '2.0', id, error: { code: -1, message: 'no', data: { why: 1 } } })).toEqual([
      { token: 'tok-1', key: 'confirm', answer: { error: { code: -1, message: 'no', data: { why: 1 } } } },
    ]);
  });

  it('requests, notifications, responses to other ids, and batches that hold a request are left to the SDK', () => {
    expect(parseClientResponses({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined();
    expect(parseClientResponses({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined();
    expect(parseClientResponses({ jsonrpc: '2.0', id: 3, result: {} })).toBeUndefined();
    expect(
      parseClientResponses([
        { jsonrpc: '2.0', id, result: accept },
        { jsonrpc: '2.0', id: 1, method: 'ping' },
      ]),
    ).toBeUndefined();
    expect(parseClientResponses([])).toBeUndefined();
  });

  it('a batch of responses keeps the answers to our ids and drops the rest', () => {
    expect(
      answers([
        { jsonrpc: '2.0', id: 3, result: {} },
        { jsonrpc: '2.0', id, result: accept },
      ]),
    ).toHaveLength(1);
  });

  it('a malformed response to an id of ours is refused, naming what is wrong', () => {
    expect(refusal({ id, result: accept })).toContain('jsonrpc must be "2.0"');
    expect(refusal({ jsonrpc: '2.0', id, result: accept, error: { code: 1, message: 'x' } })).toContain('either result or error');
    expect(refusal({ jsonrpc: '2.0', id, error: { message: 'x' } })).toContain('integer code and a string message');
    expect(refusal({ jsonrpc: '2.0', id, result: 'yes' })).toContain('result must be an object');
  });

  it("SEP-1391: result._operation.token must be the asking operation's, and is taken off the answer", () => {
    expect(answers({ jsonrpc: '2.0', id, result: { ...accept, _operation: { token: 'tok-1' } } })[0]!.answer).toEqual({ result: accept });
    expect(refusal({ jsonrpc: '2.0', id, result: { ...accept, _operation: { token: 'tok-2' } } })).toContain('is not the token of the operation that asked');
    expect(refusal({ jsonrpc: '2.0', id, result: { ...accept, _operation: { token: 7 } } })).toContain('_operation.token must be a string');
  });

  it('an id without its token takes it from result._operation.token; an error to such an id cannot be routed and is dropped', () => {
    const short = inputRequestId('y'.repeat(256), 'confirm');
    expect(answers({ jsonrpc: '2.0', id: short, result: { ...accept, _operation: { token: 'y'.repeat(256) } } })[0]!.token).toBe('y'.repeat(256));
    expect(refusal({ jsonrpc: '2.0', id: short, result: accept })).toContain('must name the operation');
    expect(answers({ jsonrpc: '2.0', id: short, error: { code: 1, message: 'no' } })).toEqual([]);
  });
});

describe('accepting answers', () => {
  it('resumes the waiting state with the client result and answers 202 with no body', async () => {
    const { deps, engine, record, service } = await asking();
    const response = await acceptClientResponses(answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), result: accept }), 'owner-1', deps);
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    expect(engine.taskCalls).toEqual([{ taskToken: 'task-token-1', output: accept }]);
    expect((await service.readCurrent(record)).status).toBe('working');
  });

  it('an error response fails the state with Mcp.InputError', async () => {
    const { deps, engine, record } = await asking();
    await acceptClientResponses(
      answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), error: { code: -32600, message: 'no' } }),
      'owner-1',
      deps,
    );
    expect(engine.taskCalls[0]!.failure?.error).toBe(INPUT_ERRORS.error);
  });

  it("a forged id from another principal reaches nothing of the owner's: 202 and no delivery", async () => {
    const { deps, engine, record, service } = await asking();
    const response = await acceptClientResponses(answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), result: accept }), 'intruder', deps);
    expect(response.status).toBe(202);
    expect(engine.taskCalls).toEqual([]);
    expect((await service.readCurrent(record)).status).toBe('input_required');
  });

  it('answering twice delivers the first answer only', async () => {
    const { deps, engine, record } = await asking();
    const body = answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), result: accept });
    expect((await acceptClientResponses(body, 'owner-1', deps)).status).toBe(202);
    expect((await acceptClientResponses(body, 'owner-1', deps)).status).toBe(202);
    expect(engine.taskCalls).toHaveLength(1);
  });

  it('an answer of the wrong shape for its question is HTTP 400 with -32602 naming the field, and delivers nothing', async () => {
    const { deps, engine, record } = await asking();
    const response = await acceptClientResponses(
      answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), result: { action: 'maybe' } }),
      'owner-1',
      deps,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32602, message: 'Invalid answer to confirm: result.action must be "accept", "decline" or "cancel"' },
    });
    expect(engine.taskCalls).toEqual([]);
  });

  it('an answer the workflow did not take is HTTP 500 with -32603; the question stays open for another try', async () => {
    const { deps, engine, record, service } = await asking();
    engine.failNextTaskCallWith = new Error('throttled');
    const body = answers({ jsonrpc: '2.0', id: inputRequestId(record.token, 'confirm'), result: accept });
    const response = await acceptClientResponses(body, 'owner-1', deps);
    expect(response.status).toBe(500);
    expect((await response.json()).error.code).toBe(-32603);
    expect(Object.keys(service.inputs.pending(await service.readCurrent(record)))).toEqual(['confirm']);
    expect((await acceptClientResponses(body, 'owner-1', deps)).status).toBe(202);
    expect(engine.taskCalls).toHaveLength(1);
  });
});
