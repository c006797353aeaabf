/**
 * Input mid-run in initialize-era synchronous calls (2025-06-18 and older clients, and
 * 2025-11-25 clients calling without a task), on the local stack: the question goes to the
 * client on the SSE stream of its `tools/call`, the client's answer is a new POST that any
 * instance takes, and the waiting call then continues. Over raw HTTP (the stream read as it
 * arrives) and with the v1 SDK Client's own elicitation and sampling handlers.
 */
import { randomUUID } from 'node:crypto';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { initialize, postTo, startInputStack, type InputStack } from '../support/input-stack.ts';
import { captureLogs } from '../support/log-capture.ts';
import { legacyNotification } from '../support/raw-mcp.ts';
import { openStream, postAnswer, type JsonRpcMessage } from '../support/sse-reader.ts';

const OLD_VERSION = '2025-06-18';
const ELICITATION = { elicitation: {} };
const DRAFT = { role: 'assistant', content: { type: 'text', text: 'Ships are safe in harbour.' }, model: 'test-model' };

let input: InputStack;
beforeAll(async () => {
  input = await startInputStack();
});
afterAll(async () => {
  await input?.close();
});

/** A client of an older revision that initialized with `capabilities`. */
async function oldClient(capabilities: Record<string, unknown> = ELICITATION, principal?: string) {
  const auth: Record<string, string> = principal ? { authorization: `Bearer ${principal}` } : {};
  const session = await initialize(input.stack.url, capabilities, auth, OLD_VERSION);
  const headers: Record<string, string> = { 'mcp-protocol-version': OLD_VERSION, ...auth, ...(session ? { 'mcp-session-id': session } : {}) };
  return {
    session,
    headers,
    call: (name: string, args: Record<string, unknown>, id: string | number = `call-${randomUUID()}`) =>
      openStream(input.stack.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, headers),
    answer: (request: JsonRpcMessage, reply: { result: unknown } | { error: unknown }) =>
      postAnswer(input.stack.url, { jsonrpc: '2.0', id: request.id, ...reply }, headers),
  };
}

const textOf = (message: JsonRpcMessage) => message.result?.content?.[0]?.text as string;

describe('raw HTTP', () => {
  it('the elicitation comes on the tools/call stream before its response; a second, fresh instance takes the answer and the call continues', async () => {
    const client = await oldClient();
    expect(client.session).toEqual(expect.any(String));
    const stream = await client.call('ask_confirm', { subject: 'the release' }, 41);
    expect(stream.status).toBe(200);
    const question = await stream.next();
    expect(question).toMatchObject({ jsonrpc: '2.0', method: 'elicitation/create', params: { message: 'Go ahead with the release?' } });
    expect(parseInputRequestId(question.id)).toEqual({ token: expect.stringMatching(/^sync-/), key: 'confirm' });
    const fresh = input.freshInstance();
    const taken = await postTo(
      fresh,
      input.stack.url,
      { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { comment: 'ship it' } } },
      client.headers,
    );
    // "If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body."
    expect(taken).toEqual({ status: 202, text: '' });
    const [response, ...after] = await stream.rest();
    expect(after).toEqual([]);
    expect(response).toMatchObject({ id: 41, result: { structuredContent: { action: 'accept', content: { comment: 'ship it' } } } });
  });

  it('a sampling request, then an elicitation showing its text, on one stream; each answered in turn', async () => {
    const client = await oldClient({ elicitation: {}, sampling: {} });
    const stream = await client.call('draft_and_confirm', { topic: 'ships' });
    const sampling = await stream.next();
    expect(sampling).toMatchObject({
      method: 'sampling/createMessage',
      params: { maxTokens: 100, messages: [{ role: 'user', content: { text: 'Write one sentence about ships.' } }] },
    });
    expect((await client.answer(sampling, { result: DRAFT })).status).toBe(202);
    const elicitation = await stream.next();
    expect(elicitation).toMatchObject({ method: 'elicitation/create', params: { message: 'Publish this draft? Ships are safe in harbour.' } });
    expect(parseInputRequestId(elicitation.id)?.key).toBe('approve');
    expect((await client.answer(elicitation, { result: { action: 'accept', content: { comment: 'yes' } } })).status).toBe(202);
    expect(textOf((await stream.rest())[0]!)).toBe('published: Ships are safe in harbour. {"comment":"yes"}');
  });

  it('a declined elicitation resumes the state with Mcp.InputDeclined, which the ASL catches', async () => {
    const client = await oldClient();
    const stream = await client.call('ask_confirm', { subject: 'x' });
    expect((await client.answer(await stream.next(), { result: { action: 'decline' } })).status).toBe(202);
    expect(textOf((await stream.rest())[0]!)).toBe('declined');
  });

  it("an error response resumes the state with Mcp.InputError carrying the client's code and message", async () => {
    const client = await oldClient({ sampling: {}, elicitation: {} });
    const stream = await client.call('draft_and_confirm', { topic: 'x' });
    expect((await client.answer(await stream.next(), { error: { code: -1, message: 'User rejected sampling request' } })).status).toBe(202);
    expect(textOf((await stream.rest())[0]!)).toBe('client error: {"code":-1,"message":"User rejected sampling request"}');
  });

  it('answering twice: the second answer is accepted (202) and ignored', async () => {
    const client = await oldClient();
    const stream = await client.call('ask_confirm', { subject: 'x' });
    const question = await stream.next();
    expect((await client.answer(question, { result: { action: 'accept', content: { comment: 'first' } } })).status).toBe(202);
    const ignored = captureLogs('answer ignored: no such question is open');
    expect((await client.answer(question, { result: { action: 'accept', content: { comment: 'second' } } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.structuredContent.content).toEqual({ comment: 'first' });
    expect(ignored.entries).toEqual([expect.objectContaining({ level: 'INFO', inputKey: expect.any(String) })]);
  });

  it("a forged id from another principal reaches nothing: 202, the question still waits, and its owner's answer works", async () => {
    const owner = await oldClient(ELICITATION, `owner-${randomUUID()}`);
    const intruder = await oldClient(ELICITATION, `intruder-${randomUUID()}`);
    const stream = await owner.call('ask_confirm', { subject: 'x' });
    const question = await stream.next();
    const ignored = captureLogs('answer ignored: no such question is open');
    expect((await intruder.answer(question, { result: { action: 'accept', content: { comment: 'forged' } } })).status).toBe(202);
    // For the intruder no such question is open: it is told nothing more than any answer gets, and the server notes it.
    expect(ignored.entries).toEqual([expect.objectContaining({ level: 'INFO', inputKey: 'confirm' })]);
    expect((await owner.answer(question, { result: { action: 'accept', content: { comment: 'real' } } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.structuredContent.content).toEqual({ comment: 'real' });
  });

  it('an answer of the wrong shape is HTTP 400 with -32602 naming the field; the question stays open', async () => {
    const client = await oldClient();
    const stream = await client.call('ask_confirm', { subject: 'x' });
    const question = await stream.next();
    const refused = await client.answer(question, { result: { action: 'perhaps' } });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32602, message: 'Invalid answer to confirm: result.action must be "accept", "decline" or "cancel"' },
    });
    const malformed = await postAnswer(input.stack.url, { id: question.id, result: { action: 'accept' } }, client.headers);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text).error.code).toBe(-32600);
    expect((await client.answer(question, { result: { action: 'accept', content: {} } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.structuredContent.action).toBe('accept');
  });

  it("cancel while waiting: notifications/cancelled for the call's id stops the execution and ends the call", async () => {
    const client = await oldClient();
    const id = `call-${randomUUID()}`;
    const stream = await client.call('ask_confirm', { subject: 'x' }, id);
    const question = await stream.next();
    expect((await legacyNotification(input.stack.url, 'notifications/cancelled', { requestId: id }, client.headers)).status).toBe(202);
    const [response] = await stream.rest();
    expect(response).toMatchObject({ id, result: { isError: true } });
    const record = await input.stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: parseInputRequestId(question.id)!.token! });
    expect(record.status).toBe('canceled');
    const execution = await input.stack.awsClients.sfn.send(new DescribeExecutionCommand({ executionArn: record.executionArn! }));
    expect(execution.status).toBe('ABORTED');
  });

  it('a client that declared no elicitation is asked nothing: the state fails with Mcp.CapabilityMissing and the result says why', async () => {
    const client = await oldClient({});
    // Every initialize gets a session, so that what the client did not declare is known too.
    expect(client.session).toBeDefined();
    const messages = await (await client.call('ask_confirm', { subject: 'x' })).rest();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.result.isError).toBe(true);
    expect(textOf(messages[0]!)).toContain('Mcp.CapabilityMissing');
    expect(textOf(messages[0]!)).toContain('did not declare the elicitation capability');
  });

  it("capabilities declared in the request's _meta work without a session", async () => {
    const meta = { 'io.modelcontextprotocol/clientCapabilities': ELICITATION };
    const stream = await openStream(
      input.stack.url,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask_confirm', arguments: { subject: 'x' }, _meta: meta } },
      { 'mcp-protocol-version': OLD_VERSION },
    );
    const question = await stream.next();
    expect((await postAnswer(input.stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: {} } })).status).toBe(202);
    expect((await stream.rest())[0]!.result.structuredContent.action).toBe('accept');
  });
});

describe('sessions that carry the declared capabilities', () => {
  it('a session id that does not verify is HTTP 404, so the client initializes again', async () => {
    const stream = await openStream(input.stack.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 's1.forged.forged' });
    expect(stream.status).toBe(404);
    expect(await stream.next()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
  });

  it("another principal's session id is unknown to this one", async () => {
    const session = await initialize(input.stack.url, ELICITATION, { authorization: `Bearer ${randomUUID()}` });
    const stream = await openStream(input.stack.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': session! });
    expect(stream.status).toBe(404);
  });

  it('DELETE with a valid session id is 204; without one the server still answers 405', async () => {
    const session = await initialize(input.stack.url, ELICITATION);
    const deleted = await fetch(input.stack.url, { method: 'DELETE', headers: { 'mcp-session-id': session!, 'mcp-protocol-version': OLD_VERSION } });
    expect(deleted.status).toBe(204);
    expect((await fetch(input.stack.url, { method: 'DELETE' })).status).toBe(405);
  });

  it('GET with a valid session id is still 405: the server offers no standalone stream', async () => {
    const session = await initialize(input.stack.url, ELICITATION);
    const opened = await fetch(input.stack.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': session!, 'mcp-protocol-version': OLD_VERSION } });
    expect(opened.status).toBe(405);
  });
});

describe('the v1 SDK Client with elicitation and sampling handlers', () => {
  let client: Client;
  const asked: string[] = [];
  beforeAll(async () => {
    client = new Client({ name: 'input-legacy-sync', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.method);
      return DRAFT;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.method);
      return { action: 'accept', content: { comment: 'looks good' } };
    });
    await client.connect(new StreamableHTTPClientTransport(input.stack.url));
  });
  afterAll(async () => {
    await client?.close();
  });

  it('callTool runs synchronously: the server asks both handlers mid-call, then answers with the result', async () => {
    const result = await client.callTool({ name: 'draft_and_confirm', arguments: { topic: 'ships' } });
    expect(asked).toEqual(['sampling/createMessage', 'elicitation/create']);
    expect(result.content).toEqual([{ type: 'text', text: 'published: Ships are safe in harbour. {"comment":"looks good"}' }]);
  });
});
