/**
 * Handle tools asking their questions: a client that declares no async dialect but does
 * declare elicitation calls `approve_deployment` (async-only), on the local stack with its
 * default settings (handle tools on). The question goes back the way that request's era
 * carries answers: 2026-07-28 multi round-trip requests on the call, or the SSE stream of
 * an initialize-era call; the run is never failed for a capability the call declared.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { initialize } from '../support/input-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { modernRequest, type CallOptions } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';
import { openStream, postAnswer } from '../support/sse-reader.ts';

/** What Claude Code declares in print mode: elicitation in both modes, no async dialect. */
const ELICITATION = { elicitation: { form: {}, url: {} } };
const DEPLOY = { environment: 'staging', changes: ['api: v2.3.1', 'web: v1.9.0'] };

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const modernCall = (name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, options: CallOptions = {}) =>
  modernRequest(stack.url, 'tools/call', { name, arguments: args, ...extra }, { capabilities: ELICITATION, ...options });

describe('a 2026-07-28 request that declares elicitation and no async dialect', () => {
  it('sees approve_deployment and the handle tools', async () => {
    const names = (ok(await modernRequest(stack.url, 'tools/list', {}, { capabilities: ELICITATION })).tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['approve_deployment', 'analyze_dataset', 'operation_status', 'operation_result', 'operation_cancel', 'operation_list']));
  });

  it('calling approve_deployment answers input_required with the approval question; the retry with the answer deploys', async () => {
    const round = ok(await modernCall('approve_deployment', DEPLOY));
    expect(round.resultType).toBe('input_required');
    const [key, question] = Object.entries(round.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('Deploy 2 changes to staging?') } });
    const retry = ok(await modernCall('approve_deployment', DEPLOY, { inputResponses: { [key]: { action: 'accept', content: { comment: 'go' } } }, requestState: round.requestState }));
    expect(retry.isError).toBeFalsy();
    expect(retry.structuredContent).toMatchObject({ environment: 'staging', planned: 2, deployed: true, decision: 'accept', comment: 'go' });
  });
});

describe('an initialize-era client that declared elicitation and no async dialect', () => {
  it('gets the approval question on the stream of its approve_deployment call; its answer deploys and the call returns the result', async () => {
    const version = '2025-06-18';
    const session = await initialize(stack.url, ELICITATION, {}, version);
    const headers: Record<string, string> = { 'mcp-protocol-version': version, ...(session ? { 'mcp-session-id': session } : {}) };
    const stream = await openStream(stack.url, { jsonrpc: '2.0', id: `call-${randomUUID()}`, method: 'tools/call', params: { name: 'approve_deployment', arguments: DEPLOY } }, headers);
    const question = await stream.next();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('Deploy 2 changes to staging?') } });
    expect((await postAnswer(stack.url, { jsonrpc: '2.0', id: question.id, result: { action: 'decline' } }, headers)).status).toBe(202);
    const [response] = await stream.rest();
    expect(response?.result?.structuredContent).toMatchObject({ environment: 'staging', deployed: false, decision: 'decline' });
  });
});
