/**
 * Multi round-trip requests (SEP-2322) on 2026-07-28 synchronous `tools/call`s, over raw
 * HTTP against the local stack: an execution's question comes back as `input_required`
 * with `inputRequests` and a `requestState`, and the retry carrying the answers continues
 * the same execution. Test names quote the MRTR page where it says MUST or SHOULD.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInputStack, type InputStack } from '../support/input-stack.ts';
import { captureLogs } from '../support/log-capture.ts';
import { MODERN_VERSION, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

/** What the MRTR clients here declare: they can answer elicitation and sampling. */
const CAPS = { elicitation: {}, sampling: {} };
const ALICE = { headers: { authorization: 'Bearer alice' } };
const BOB = { headers: { authorization: 'Bearer bob' } };

let input: InputStack;

beforeAll(async () => {
  input = await startInputStack();
});
afterAll(async () => {
  await input?.close();
});

/** A 2026-07-28 tools/call; `extra` adds top-level params (inputResponses, requestState, anything). */
function call(name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, options: CallOptions = {}) {
  return modernRequest(input.stack.url, 'tools/call', { name, arguments: args, ...extra }, { capabilities: CAPS, ...options });
}

/** The first round of a call, which must stop at a question. */
async function firstRound(name: string, args: Record<string, unknown>, options: CallOptions = {}) {
  const round = ok(await call(name, args, {}, options));
  expect(round.resultType).toBe('input_required');
  return round as { resultType: string; inputRequests: Record<string, { method: string; params: Record<string, unknown> }>; requestState: string };
}

const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });
const sampled = (text: string) => ({ role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' });

describe('one question', () => {
  it('a tools/call whose execution asks answers resultType "input_required" with inputRequests keyed by the state\'s key and a requestState', async () => {
    const round = await firstRound('ask_confirm', { subject: 'the deployment' });
    expect(round.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: { message: 'Go ahead with the deployment?', requestedSchema: { type: 'object', properties: { comment: { type: 'string' } } } },
      },
    });
    expect(typeof round.requestState).toBe('string');
    for (const key of ['content', 'isError', 'taskId', 'structuredContent']) expect(round).not.toHaveProperty(key);
  });

  it('the client retries the same call with inputResponses and that requestState, and the same execution continues to its result', async () => {
    const round = await firstRound('ask_confirm', { subject: 'the deployment' });
    const retry = ok(
      await call(
        'ask_confirm',
        { subject: 'the deployment' },
        { inputResponses: { confirm: accept({ comment: 'ship it' }) }, requestState: round.requestState },
      ),
    );
    expect(retry.resultType).toBe('complete');
    // Only the state that asked can produce this text: it names the answer the retry carried.
    expect(retry.content).toEqual([{ type: 'text', text: 'confirmed: {"comment":"ship it"}' }]);
    expect(retry.structuredContent).toEqual({ action: 'accept', content: { comment: 'ship it' } });
  });

  it('a declined elicitation resumes the state with Mcp.InputDeclined, and its Catch decides the result', async () => {
    const round = await firstRound('ask_confirm', { subject: 'the deletion' });
    const retry = ok(
      await call('ask_confirm', { subject: 'the deletion' }, { inputResponses: { confirm: { action: 'decline' } }, requestState: round.requestState }),
    );
    expect(retry).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'declined' }] });
  });

  it('Servers MUST NOT send an inputRequests that the client has not declared support for: the state fails with Mcp.CapabilityMissing', async () => {
    const result = ok(await call('ask_confirm', { subject: 'anything' }, {}, { capabilities: {} }));
    expect(result.resultType).toBe('complete');
    expect(result).not.toHaveProperty('inputRequests');
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/Mcp\.CapabilityMissing/);
  });
});

describe('several questions and rounds', () => {
  it('two questions pending at once come back together in one inputRequests', async () => {
    const round = await firstRound('ask_rounds', { topic: 'rivers' });
    expect(Object.keys(round.inputRequests).sort()).toEqual(['first', 'second']);
    expect(round.inputRequests.first).toMatchObject({ method: 'elicitation/create', params: { message: 'First?' } });
    expect(round.inputRequests.second).toMatchObject({ method: 'elicitation/create', params: { message: 'Second?' } });
  });

  it('several rounds: each retry that leads to new questions answers input_required again with a fresh requestState, until the result', async () => {
    const args = { topic: 'rivers' };
    const first = await firstRound('ask_rounds', args);
    const second = ok(
      await call('ask_rounds', args, { inputResponses: { first: accept({ value: 'a' }), second: accept({ value: 'b' }) }, requestState: first.requestState }),
    );
    expect(second.resultType).toBe('input_required');
    expect(second.inputRequests).toEqual({
      third: {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'One word about rivers?' } }], maxTokens: 20 },
      },
    });
    expect(second.requestState).not.toBe(first.requestState);
    const done = ok(await call('ask_rounds', args, { inputResponses: { third: sampled('Nile') }, requestState: second.requestState }));
    expect(done).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'first=a second=b third=Nile' }] });
  });

  it('If the client fails to send all the information requested, the server SHOULD respond with a new InputRequiredResult requesting the missing information again', async () => {
    const args = { topic: 'lakes' };
    const first = await firstRound('ask_rounds', args);
    const again = ok(await call('ask_rounds', args, { inputResponses: { first: accept({ value: 'x' }) }, requestState: first.requestState }));
    expect(again.resultType).toBe('input_required');
    expect(again.inputRequests).toEqual({ second: first.inputRequests.second });
    // A retry with no answers at all is asked the same again.
    const same = ok(await call('ask_rounds', args, { requestState: again.requestState }));
    expect(same.inputRequests).toEqual({ second: first.inputRequests.second });
    const next = ok(await call('ask_rounds', args, { inputResponses: { second: accept({ value: 'y' }) }, requestState: same.requestState }));
    expect(Object.keys(next.inputRequests)).toEqual(['third']);
    const done = ok(await call('ask_rounds', args, { inputResponses: { third: sampled('Baikal') }, requestState: next.requestState }));
    expect(done.content[0].text).toBe('first=x second=y third=Baikal');
  });

  it('a wrapped {method, result} response is not an answer: that question is asked again', async () => {
    const round = await firstRound('ask_confirm', { subject: 'wrapping' });
    const wrapped = { confirm: { method: 'elicitation/create', result: accept({ comment: 'wrapped' }) } };
    const again = ok(await call('ask_confirm', { subject: 'wrapping' }, { inputResponses: wrapped, requestState: round.requestState }));
    expect(again).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: round.inputRequests.confirm } });
  });
});

describe('what the server ignores', () => {
  it('If additional, unexpected parameters are provided, the server SHOULD ignore any information it does not recognize', async () => {
    const round = await firstRound('ask_confirm', { subject: 'extras' });
    const ignored = captureLogs('answer ignored: no such question is open');
    const retry = ok(
      await call(
        'ask_confirm',
        { subject: 'extras' },
        {
          inputResponses: { confirm: { ...accept({ comment: 'ok' }), extra: true }, 'never-asked': accept({ comment: 'ignored' }) },
          requestState: round.requestState,
          somethingNew: { nested: 1 },
        },
      ),
    );
    expect(retry).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'confirmed: {"comment":"ok"}' }] });
    // The answer to a question never asked is ignored, and noted (INFO).
    expect(ignored.entries).toEqual([expect.objectContaining({ level: 'INFO', inputKey: 'never-asked' })]);
  });

  it('a first call carrying inputResponses (no requestState) answers the questions its own run asks and ignores the rest', async () => {
    const fresh = ok(
      await call('ask_confirm', { subject: 'no state' }, { inputResponses: { confirm: accept({ comment: 'up front' }), unexpected_key: accept({}) } }),
    );
    expect(fresh).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'confirmed: {"comment":"up front"}' }] });
  });

  it('a first call whose inputResponses name no question it asks is asked as usual', async () => {
    const fresh = ok(await call('ask_confirm', { subject: 'no match' }, { inputResponses: { wrong_key: accept({}) } }));
    expect(fresh.resultType).toBe('input_required');
    expect(Object.keys(fresh.inputRequests)).toEqual(['confirm']);
  });
});

describe('requestState is tamper-proof', () => {
  /** One character of the state changed, as an attacker would. */
  function tampered(state: string): string {
    const i = Math.floor(state.length / 2);
    return state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1);
  }

  it('servers MUST reject state that fails verification: a tampered requestState gets -32602, and its answer is not delivered', async () => {
    const round = await firstRound('ask_confirm', { subject: 'tamper' });
    const response = await call(
      'ask_confirm',
      { subject: 'tamper' },
      { inputResponses: { confirm: accept({ comment: 'evil' }) }, requestState: tampered(round.requestState) },
    );
    expect(response.status).toBe(200);
    expect(rpcError(response)).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid requestState/), data: { field: 'requestState' } });
    const genuine = ok(
      await call('ask_confirm', { subject: 'tamper' }, { inputResponses: { confirm: accept({ comment: 'good' }) }, requestState: round.requestState }),
    );
    expect(genuine.content[0].text).toBe('confirmed: {"comment":"good"}');
  });

  it('a requestState that is not a string, or not one of ours, gets -32602', async () => {
    for (const requestState of [42, 'opaque-but-made-up', '']) {
      expect(rpcError(await call('ask_confirm', { subject: 'x' }, { requestState })).code).toBe(-32602);
    }
  });

  it("rejecting state presented by a different principal: another caller's requestState gets -32602 and reaches nothing", async () => {
    const round = await firstRound('ask_confirm', { subject: 'owned' }, ALICE);
    const stolen = await call(
      'ask_confirm',
      { subject: 'owned' },
      { inputResponses: { confirm: accept({ comment: 'bob was here' }) }, requestState: round.requestState },
      BOB,
    );
    expect(rpcError(stolen)).toMatchObject({ code: -32602, message: expect.stringMatching(/another caller/) });
    const own = ok(
      await call('ask_confirm', { subject: 'owned' }, { inputResponses: { confirm: accept({ comment: 'alice' }) }, requestState: round.requestState }, ALICE),
    );
    expect(own.content[0].text).toBe('confirmed: {"comment":"alice"}');
  });

  it('rejecting state presented on a request that does not match: other arguments or another tool get -32602', async () => {
    const round = await firstRound('ask_confirm', { subject: 'one thing' });
    const otherArgs = await call('ask_confirm', { subject: 'another thing' }, { inputResponses: { confirm: accept({}) }, requestState: round.requestState });
    expect(rpcError(otherArgs)).toMatchObject({ code: -32602, message: expect.stringMatching(/another call/) });
    const otherTool = await call('ask_rounds', { topic: 'one thing' }, { requestState: round.requestState });
    expect(rpcError(otherTool)).toMatchObject({ code: -32602, message: expect.stringMatching(/another call/) });
    // The question is still open for the call it belongs to.
    const again = ok(await call('ask_confirm', { subject: 'one thing' }, { requestState: round.requestState }));
    expect(again.inputRequests).toEqual(round.inputRequests);
  });

  it('an answer of the wrong shape gets -32602 naming the field, and the question stays open', async () => {
    const round = await firstRound('ask_confirm', { subject: 'shape' });
    const wrong = await call('ask_confirm', { subject: 'shape' }, { inputResponses: { confirm: { action: 'maybe' } }, requestState: round.requestState });
    expect(rpcError(wrong)).toMatchObject({ code: -32602, message: expect.stringContaining('inputResponses.confirm.action') });
    const right = ok(
      await call('ask_confirm', { subject: 'shape' }, { inputResponses: { confirm: accept({ comment: 'fixed' }) }, requestState: round.requestState }),
    );
    expect(right.content[0].text).toBe('confirmed: {"comment":"fixed"}');
  });
});

describe('statelessness', () => {
  it('the requests in each step are completely independent: a second, fresh app instance over the same stores takes the retry', async () => {
    const round = await firstRound('ask_confirm', { subject: 'elsewhere' });
    const fresh = input.freshInstance();
    const body = {
      jsonrpc: '2.0',
      id: 'retry-elsewhere',
      method: 'tools/call',
      params: {
        name: 'ask_confirm',
        arguments: { subject: 'elsewhere' },
        inputResponses: { confirm: accept({ comment: 'from another instance' }) },
        requestState: round.requestState,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': CAPS,
        },
      },
    };
    const request = new Request(input.stack.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'ask_confirm',
      },
      body: JSON.stringify(body),
    });
    const response = await fresh.fetch(request, 'local');
    const message = JSON.parse(await response.text());
    expect(message.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'confirmed: {"comment":"from another instance"}' }] });
  });
});
