/**
 * Every AWS call a start and an end make, on every client the server has (DynamoDB, Step
 * Functions, Lambda for durable tools, EventBridge), for a state-machine tool and a durable
 * tool: the request's calls, and status sync's for the RUNNING event and for the terminal
 * one apart. docs/performance.md lists each with the guarantee it serves; the counts are
 * exact, so a call added to either path fails here. The calls per dialect are in
 * aws-calls-per-operation.test.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAwsCalls, type AwsCallCounter, type MiddlewareClient } from '../../lambdas/aws/aws-call-counter.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

type Scope = 'request' | 'RUNNING' | 'terminal';
type Counts = Record<string, number>;

let stack: LocalStack;
const scope = new AsyncLocalStorage<Scope>();
/** Calls of the local stand-ins themselves (the local key-size check reads the table's schema once). */
const LOCAL_ONLY = new Set(['dynamodb:DescribeTable']);
let counters: Record<Scope, [string, AwsCallCounter][]>;

beforeAll(async () => {
  // No TTL sweeps during the count: they are the local stand-in for DynamoDB's own TTL.
  stack = await startTestStack({ ttl: { intervalMs: 3_600_000 } });
  // A request does not carry the test's async context across HTTP: the server's handler is scoped instead.
  const fetch = stack.app.fetch;
  stack.app.fetch = (request, principal) => scope.run('request', () => fetch(request, principal));
  // Events reach status sync a moment after the request that caused them, as EventBridge's latency has them do.
  const statusSync = stack.app.statusSync;
  stack.app.statusSync = async (event) => {
    await sleep(300);
    const status = (event as { detail?: { status?: string } }).detail?.status;
    return scope.run(status === 'RUNNING' ? 'RUNNING' : 'terminal', () => statusSync(event));
  };
  const clients: [string, MiddlewareClient][] = Object.entries(stack.awsClients).flatMap(([service, client]) => (client ? [[service, client]] : []));
  const forScope = (wanted: Scope): [string, AwsCallCounter][] =>
    clients.map(([service, client]) => [service, countAwsCalls(client, { when: () => scope.getStore() === wanted })]);
  counters = { request: forScope('request'), RUNNING: forScope('RUNNING'), terminal: forScope('terminal') };
});
afterAll(async () => {
  await stack?.close();
});

function countsOf(list: [string, AwsCallCounter][]): Counts {
  const named = list.flatMap(([service, counter]) => Object.entries(counter.snapshot()).map(([name, n]) => [`${service}:${name}`, n] as const));
  return Object.fromEntries(named.filter(([name]) => !LOCAL_ONLY.has(name)));
}

/** Starts a 2025-11-25 task of `call` and waits for its end; the calls of the start and of each status event. */
async function startAndEnd(call: { name: string; arguments: Record<string, unknown> }): Promise<Record<Scope, Counts>> {
  await stack.drainEvents();
  for (const list of Object.values(counters)) for (const [, counter] of list) counter.reset();
  const taskId = ok(await legacyRequest(stack.url, 'tools/call', { ...call, task: {} })).task.taskId as string;
  const start = countsOf(counters.request);
  await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['completed']);
  await stack.drainEvents();
  return { request: start, RUNNING: countsOf(counters.RUNNING), terminal: countsOf(counters.terminal) };
}

/** An end writes these whatever the engine (the record's read, its terminal write, the slot, the finished occurrence, the operator's event). */
const END_CALLS = {
  'dynamodb:GetItem': 2,
  'dynamodb:UpdateItem': 2,
  'dynamodb:DeleteItem': 1,
  'dynamodb:PutItem': 1,
  'eventBridge:PutEvents': 1,
};

describe('AWS calls of a start and an end, every client', () => {
  it('a state machine: the start is PutItem, UpdateItem, StartExecution, GetItem; RUNNING is a read and the operator event; the end five DynamoDB calls and the event', async () => {
    const calls = await startAndEnd({ name: 'analyze_dataset', arguments: { rows: 10 } });
    expect(calls.request).toEqual({ 'dynamodb:PutItem': 1, 'dynamodb:UpdateItem': 1, 'sfn:StartExecution': 1, 'dynamodb:GetItem': 1 });
    expect(calls.RUNNING).toEqual({ 'dynamodb:GetItem': 1, 'eventBridge:PutEvents': 1 });
    expect(calls.terminal).toEqual(END_CALLS);
  });

  it('a durable function: Invoke in place of StartExecution, and each status event reads its execution (GetDurableExecution), which the event does not carry', async () => {
    // A pause, so the RUNNING event's read finds it running: a read after the end would settle it there.
    const calls = await startAndEnd({ name: 'count_primes_durable', arguments: { below: 100, chunks: 1, pauseSeconds: 3 } });
    expect(calls.request).toEqual({ 'dynamodb:PutItem': 1, 'dynamodb:UpdateItem': 1, 'lambda:Invoke': 1, 'dynamodb:GetItem': 1 });
    expect(calls.RUNNING).toEqual({ 'lambda:GetDurableExecution': 1, 'dynamodb:GetItem': 1, 'eventBridge:PutEvents': 1 });
    expect(calls.terminal).toEqual({ 'lambda:GetDurableExecution': 1, ...END_CALLS });
  });
});
