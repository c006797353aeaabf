/**
 * Handle tools asking their questions: a client that declares no async dialect but does
 * declare elicitation calls `approve_deployment` (async-only), on the local stack with its
 * default settings (handle tools on). The question goes back the way that request's era
 * carries answers: 2026-07-28 multi round-trip requests on the call, or the SSE stream of
 * an initialize-era call, and again on `operation_result` once the call has handed the
 * operation off; the run is never failed for a capability the call declared. The durable twin,
 * approve_deployment_durable, is held to every step of it.
 */
import { randomUUID } from 'node:crypto';
import { parseInputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { initialize } from '../support/input-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import { ok } from '../support/rpc-assertions.ts';
import { openStream, postAnswer } from '../support/sse-reader.ts';

/** What Claude Code declares in print mode: elicitation in both modes, no async dialect. */
const ELICITATION = { elicitation: { form: {}, url: {} } };
/** The state machine tool and its durable twin: each must ask and end the same way. */
const TOOLS = ['approve_deployment', 'approve_deployment_durable'];
const DEPLOY = { environment: 'staging', changes: ['api: v2.3.1', 'web: v1.9.0'] };

let stack: LocalStack;
beforeAll(async () => {
  // An 8-second blocking bound: a question left unanswered is handed off soon, yet a busy machine still answers or cancels within it.
  stack = await startTestStack({ limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 8 } });
});
afterAll(async () => {
  await stack?.close();
});

const modernCall = (name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, options: CallOptions = {}) =>
  modernRequest(stack.url, 'tools/call', { name, arguments: args, ...extra }, { capabilities: ELICITATION, ...options });

describe.each(TOOLS)('a 2026-07-28 request that declares elicitation and no async dialect (%s)', (tool) => {
  it('sees approve_deployment and the handle tools', async () => {
    const names = (ok(await modernRequest(stack.url, 'tools/list', {}, { capabilities: ELICITATION })).tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([tool, 'analyze_dataset', 'operation_status', 'operation_result', 'operation_cancel', 'operation_list']));
  });

  it('calling approve_deployment answers input_required with the approval question; the retry with the answer deploys', async () => {
    const round = ok(await modernCall(tool, DEPLOY));
    expect(round.resultType).toBe('input_required');
    const [key, question] = Object.entries(round.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('Deploy 2 changes to staging?') } });
    const retry = ok(
      await modernCall(tool, DEPLOY, {
        inputResponses: { [key]: { action: 'accept', content: { comment: 'go' } } },
        requestState: round.requestState,
      }),
    );
    expect(retry.isError).toBeFalsy();
    expect(retry.structuredContent).toMatchObject({ environment: 'staging', planned: 2, deployed: true, decision: 'accept', comment: 'go' });
  });
});

describe.each(TOOLS)('a question still open after its call (%s)', (tool) => {
  it('a 2026-07-28 client that left the round finds the operation with operation_list; operation_result asks the question, and its retry deploys', async () => {
    const round = ok(await modernCall(tool, { environment: 'later', changes: ['db: v7'] }));
    expect(round.resultType).toBe('input_required');
    const listed = ok(await modernCall('operation_list', {})).structuredContent.operations as Array<{
      operationId: string;
      tool: string;
      status: string;
      createdAt: string;
    }>;
    const open = listed.find((o) => o.tool === tool && o.status === 'input_required');
    expect(open).toBeDefined();
    const status = ok(await modernCall('operation_status', { operationId: open!.operationId }));
    expect(status.content[0].text).toContain('waiting for an answer');
    const asked = ok(await modernCall('operation_result', { operationId: open!.operationId }));
    expect(asked.resultType).toBe('input_required');
    const [key, question] = Object.entries(asked.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
    expect(question.params.message).toContain('Deploy 1 change');
    const retry = ok(
      await modernCall(
        'operation_result',
        { operationId: open!.operationId, waitSeconds: 10 },
        { inputResponses: { [key]: { action: 'accept', content: {} } }, requestState: asked.requestState },
      ),
    );
    expect(retry.structuredContent).toMatchObject({ environment: 'later', planned: 1, deployed: true, decision: 'accept' });
  });

  it('an initialize-era call that got no answer within its bound hands off; operation_result sends the question again on its stream, and the answer deploys', async () => {
    const version = '2025-06-18';
    const session = await initialize(stack.url, ELICITATION, {}, version);
    const headers: Record<string, string> = { 'mcp-protocol-version': version, ...(session ? { 'mcp-session-id': session } : {}) };
    const args = { environment: 'unanswered', changes: ['cache: v3'] };
    const first = await openStream(
      stack.url,
      { jsonrpc: '2.0', id: `call-${randomUUID()}`, method: 'tools/call', params: { name: tool, arguments: args } },
      headers,
    );
    expect((await first.next()).method).toBe('elicitation/create');
    const [handedOff] = await first.rest();
    const { operationId } = (handedOff?.result?.structuredContent ?? {}) as { operationId?: string };
    expect(operationId).toEqual(expect.any(String));
    const params = { name: 'operation_result', arguments: { operationId, waitSeconds: 10 } };
    const again = await openStream(stack.url, { jsonrpc: '2.0', id: `result-${randomUUID()}`, method: 'tools/call', params }, headers);
    const question = await again.next();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('Deploy 1 change') } });
    expect((await postAnswer(stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: {} } }, headers)).status).toBe(202);
    const [response] = await again.rest();
    expect(response?.result?.structuredContent).toMatchObject({ environment: 'unanswered', deployed: true, decision: 'accept' });
  });
});

describe.each(TOOLS)('an initialize-era client that declared elicitation and no async dialect (%s)', (tool) => {
  it('gets the approval question on the stream of its approve_deployment call; its answer deploys and the call returns the result', async () => {
    const version = '2025-06-18';
    const session = await initialize(stack.url, ELICITATION, {}, version);
    const headers: Record<string, string> = { 'mcp-protocol-version': version, ...(session ? { 'mcp-session-id': session } : {}) };
    const stream = await openStream(
      stack.url,
      { jsonrpc: '2.0', id: `call-${randomUUID()}`, method: 'tools/call', params: { name: tool, arguments: DEPLOY } },
      headers,
    );
    const question = await stream.next();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('Deploy 2 changes to staging?') } });
    expect((await postAnswer(stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'decline' } }, headers)).status).toBe(202);
    const [response] = await stream.rest();
    expect(response?.result?.structuredContent).toMatchObject({ environment: 'staging', deployed: false, decision: 'decline' });
  });

  it("notifications/cancelled for the waiting call's id stops the operation and ends the call, as for any waited-on call", async () => {
    const version = '2025-06-18';
    const session = await initialize(stack.url, ELICITATION, {}, version);
    const headers: Record<string, string> = { 'mcp-protocol-version': version, ...(session ? { 'mcp-session-id': session } : {}) };
    const id = `call-${randomUUID()}`;
    const stream = await openStream(
      stack.url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { environment: 'dropped', changes: ['x'] } } },
      headers,
    );
    const question = await stream.next();
    expect((await legacyNotification(stack.url, 'notifications/cancelled', { requestId: id }, headers)).status).toBe(202);
    const [response] = await stream.rest();
    expect(response).toMatchObject({ id, result: { isError: true } });
    const record = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: parseInputRequestId(question.id)!.token! });
    expect(record.status).toBe('canceled');
  });
});
