/**
 * What one operation costs in AWS calls, counted by a middleware on the server's own
 * SDK clients while real requests run through the local stack: start, each poll, the
 * result and a cancel, in every dialect. Status-sync's calls (events arrive while a
 * request runs) are told apart by the async context they run in, and counted apart.
 * The counts are exact, so a change that adds a call fails here.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAwsCalls, type AwsCallCounter } from '../../lambdas/aws/aws-call-counter.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

type Counts = Record<string, number>;

let stack: LocalStack;
const inStatusSync = new AsyncLocalStorage<true>();
/** Calls of the local stand-ins themselves (the local key-size check reads the table's schema once). */
const LOCAL_ONLY = new Set(['dynamodb:DescribeTable']);
/** The request's calls and status sync's, told apart by the async context each runs in. */
let counters: { request: AwsCallCounter[]; statusSync: AwsCallCounter[] };

/** The counters' calls, by service-prefixed command name ("dynamodb:GetItem"). */
function countsOf(dynamodb: AwsCallCounter, sfn: AwsCallCounter): Counts {
  const named = [
    ...Object.entries(dynamodb.snapshot()).map(([name, n]) => [`dynamodb:${name}`, n] as const),
    ...Object.entries(sfn.snapshot()).map(([name, n]) => [`sfn:${name}`, n] as const),
  ];
  return Object.fromEntries(named.filter(([name]) => !LOCAL_ONLY.has(name)));
}

/** The calls `work` makes, and those of the status events it caused, once they are all applied. */
async function measure(work: () => Promise<unknown>): Promise<{ request: Counts; statusSync: Counts }> {
  await stack.drainEvents();
  for (const counter of [...counters.request, ...counters.statusSync]) counter.reset();
  await work();
  await stack.drainEvents();
  return { request: countsOf(counters.request[0]!, counters.request[1]!), statusSync: countsOf(counters.statusSync[0]!, counters.statusSync[1]!) };
}

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const LRO = { experimental: { longRunningOperations: {} } };

beforeAll(async () => {
  // No TTL sweeps during the count: they are the local stand-in for DynamoDB's own TTL.
  stack = await startTestStack({ toolsDir: 'test/conformance/tools', ttl: { intervalMs: 3_600_000 } });
  // Events reach status sync a moment after the request that caused them answered, as
  // EventBridge's delivery latency has them do in AWS; so each side's count is exact.
  const statusSync = stack.app.statusSync;
  stack.app.statusSync = async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await inStatusSync.run(true, () => statusSync(event));
  };
  const { dynamodb, sfn } = stack.awsClients;
  const duringRequest = { when: () => !inStatusSync.getStore() };
  const duringStatusSync = { when: () => inStatusSync.getStore() === true };
  counters = {
    request: [countAwsCalls(dynamodb, duringRequest), countAwsCalls(sfn, duringRequest)],
    statusSync: [countAwsCalls(dynamodb, duringStatusSync), countAwsCalls(sfn, duringStatusSync)],
  };
});
afterAll(async () => {
  await stack?.close();
});

/**
 * A cancel: the dialect's read, the core's read, StopExecution, DescribeExecution (how did
 * it end?), the terminal write, the slot release and the emptied slot item's delete.
 */
/**
 * An end appends its `operation.finished` occurrence (Events extension): one PutItem, and one
 * GetItem of the owner's subscription slots; with none live (this principal subscribes to
 * nothing), no Query of its webhooks.
 */
const FINISHED_EVENT_CALLS = { 'dynamodb:PutItem': 1, 'dynamodb:GetItem': 1 };

const CANCEL_CALLS = {
  'dynamodb:GetItem': 2 + FINISHED_EVENT_CALLS['dynamodb:GetItem'],
  'sfn:StopExecution': 1,
  'sfn:DescribeExecution': 1,
  'dynamodb:UpdateItem': 2,
  'dynamodb:DeleteItem': 1,
  'dynamodb:PutItem': FINISHED_EVENT_CALLS['dynamodb:PutItem'],
};

const slow = (seconds: number) => ({ name: 'slow_compute', arguments: { seconds, label: 'x' } });

describe('AWS calls per operation', () => {
  it('SEP-1391: start is 2 writes (the record; the slot with the request alias) + 1 StartExecution + 1 read for a cancel that raced it; a poll is 1 GetItem; the result 1 GetItem; a cancel by token 2 reads, 1 stop, 1 describe, 3 writes', async () => {
    const token = `tok-${randomUUID()}`;
    const start = await measure(async () => ok(await legacyRequest(stack.url, 'tools/call', { ...slow(0), operation: { token } }, { capabilities: LRO })));
    expect(start.request).toEqual({ 'dynamodb:PutItem': 1, 'dynamodb:UpdateItem': 1, 'sfn:StartExecution': 1, 'dynamodb:GetItem': 1 });
    await pollUntilStatus(() => legacyRequest(stack.url, 'tools/async/status', { token }), ['completed']);
    const poll = await measure(async () => ok(await legacyRequest(stack.url, 'tools/async/status', { token })));
    expect(poll.request).toEqual({ 'dynamodb:GetItem': 1 });
    const result = await measure(async () => ok(await legacyRequest(stack.url, 'tools/async/result', { token })));
    expect(result.request).toEqual({ 'dynamodb:GetItem': 1 });

    const running = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { ...slow(600), operation: { token: running } }, { capabilities: LRO }));
    const runningPoll = await measure(async () => ok(await legacyRequest(stack.url, 'tools/async/status', { token: running })));
    expect(runningPoll.request).toEqual({ 'dynamodb:GetItem': 1 });
    const cancel = await measure(() => legacyNotification(stack.url, 'notifications/cancelled', { requestId: 'x', _operation: { token: running } }));
    expect(cancel.request).toEqual(CANCEL_CALLS);
    // The ABORTED event finds the record already canceled: one read, no write.
    expect(cancel.statusSync).toEqual({ 'dynamodb:GetItem': 1 });
  });

  it('status sync: the RUNNING event of a started operation is one read; the terminal event one read, the terminal write, the slot release and the finished occurrence', async () => {
    const token = `tok-${randomUUID()}`;
    const start = await measure(async () => ok(await legacyRequest(stack.url, 'tools/call', { ...slow(0), operation: { token } }, { capabilities: LRO })));
    // RUNNING (record already working: a read) and SUCCEEDED (a read, the terminal write, the slot release, the
    // emptied slot item's delete, and the operation.finished occurrence).
    expect(start.statusSync).toEqual({
      'dynamodb:GetItem': 2 + FINISHED_EVENT_CALLS['dynamodb:GetItem'],
      'dynamodb:UpdateItem': 2,
      'dynamodb:DeleteItem': 1,
      'dynamodb:PutItem': FINISHED_EVENT_CALLS['dynamodb:PutItem'],
    });
  });

  it("Tasks extension (2026-07-28): start is 2 writes (the record; the slot, which forgets the request id's old alias) + 1 StartExecution + 1 read for a cancel that raced it; tasks/get is 1 GetItem, result inlined", async () => {
    const created = await measure(async () => ok(await modernRequest(stack.url, 'tools/call', slow(0), { capabilities: EXT })));
    expect(created.request).toEqual({ 'dynamodb:PutItem': 1, 'dynamodb:UpdateItem': 1, 'sfn:StartExecution': 1, 'dynamodb:GetItem': 1 });
    const taskId = (await modernRequest(stack.url, 'tools/call', slow(0), { capabilities: EXT })).message!.result.taskId as string;
    await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT }), ['completed']);
    const get = await measure(async () => ok(await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: EXT })));
    expect(get.request).toEqual({ 'dynamodb:GetItem': 1 });

    const running = ok(await modernRequest(stack.url, 'tools/call', slow(600), { capabilities: EXT })).taskId as string;
    const cancel = await measure(async () => ok(await modernRequest(stack.url, 'tasks/cancel', { taskId: running }, { capabilities: EXT })));
    expect(cancel.request).toEqual(CANCEL_CALLS);
  });

  it('2025-11-25 tasks: start is 2 writes + 1 StartExecution + 1 read; tasks/get and tasks/result of a finished task, tasks/cancel', async () => {
    const created = await measure(async () => ok(await legacyRequest(stack.url, 'tools/call', { ...slow(0), task: {} })));
    expect(created.request).toEqual({ 'dynamodb:PutItem': 1, 'dynamodb:UpdateItem': 1, 'sfn:StartExecution': 1, 'dynamodb:GetItem': 1 });
    const taskId = ok(await legacyRequest(stack.url, 'tools/call', { ...slow(0), task: {} })).task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['completed']);
    const get = await measure(async () => ok(await legacyRequest(stack.url, 'tasks/get', { taskId })));
    expect(get.request).toEqual({ 'dynamodb:GetItem': 1 });
    const result = await measure(async () => ok(await legacyRequest(stack.url, 'tasks/result', { taskId })));
    expect(result.request).toEqual({ 'dynamodb:GetItem': 2 });

    const running = ok(await legacyRequest(stack.url, 'tools/call', { ...slow(600), task: {} })).task.taskId as string;
    const cancel = await measure(async () => ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId: running })));
    expect(cancel.request).toEqual(CANCEL_CALLS);
  });
});
