/**
 * A start that fails never holds a slot or runs twice, on the local stack, with faults
 * injected by a middleware on the server's own Step Functions client: StartExecution
 * throttled (nothing started), and StartExecution accepted with its answer lost.
 */
import { randomUUID } from 'node:crypto';
import { ListExecutionsCommand, ListStateMachinesCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-service.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStackWithSfn, stopTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const LIMIT = 2;
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const LONG = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 600 } };

type Fault = 'throttle' | 'lose-answer' | undefined;
let fault: Fault;
let stack: LocalStack;
let sfn: SFNClient;

function throttling(): Error {
  return Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 } });
}

beforeAll(async () => {
  ({ stack, sfn } = await startTestStackWithSfn({ limits: { ...DEFAULT_LIMITS, maxActiveOperations: LIMIT } }));
  // Added before the first call: the client resolves each command's middleware once.
  type Next = (args: unknown) => Promise<unknown>;
  const inject = (next: Next, context: { commandName?: string }) => async (args: unknown) => {
    if (context.commandName !== 'StartExecutionCommand' || fault === undefined) return next(args);
    if (fault === 'throttle') throw throttling();
    await next(args); // Accepted by Step Functions; the answer never reaches the server.
    throw throttling();
  };
  stack.awsClients.sfn.middlewareStack.add(inject as never, { step: 'initialize', name: 'startFaults', priority: 'high' } as never);
});
afterAll(async () => {
  await stopTestStack({ stack, sfn });
});

function principal() {
  const headers = { authorization: `Bearer ${randomUUID()}` };
  return {
    start: () => modernRequest(stack.url, 'tools/call', LONG, { capabilities: TASKS, headers }),
    get: (taskId: string) => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers }),
    cancel: (taskId: string) => modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: TASKS, headers }),
  };
}

/** Every execution of the long tool's state machine, by name. */
async function executionNames(): Promise<string[]> {
  const machines = await sfn.send(new ListStateMachinesCommand({}));
  const machine = machines.stateMachines!.find((m) => m.name?.includes('analyze_dataset'))!;
  const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine.stateMachineArn! }));
  return listed.executions!.map((e) => e.name!);
}

describe('a start whose StartExecution fails', () => {
  it('throttled past the SDK’s retries, again and again: the principal is never locked out', async () => {
    const alice = principal();
    const before = (await executionNames()).length;
    const logs = captureLogs('request failed');
    fault = 'throttle';
    try {
      for (let attempt = 0; attempt < LIMIT + 2; attempt++) expect(rpcError(await alice.start()).code).toBe(-32603);
    } finally {
      fault = undefined;
    }
    // Each failed start is logged as an internal error, with the throttling as its cause.
    expect(logs.lines()).toEqual(Array(LIMIT + 2).fill('ERROR request failed'));
    for (const entry of logs.entries) expect(entry).toMatchObject({ tool: 'analyze_dataset', error: expect.stringContaining('ThrottlingException') });
    expect((await executionNames()).length).toBe(before);
    // Every failed start gave its slot back: the principal still starts up to its limit.
    const started = [ok(await alice.start()), ok(await alice.start())];
    for (const result of started) expect(result).toMatchObject({ resultType: 'task', status: 'working' });
    for (const result of started) await alice.cancel(result.taskId);
  });

  it('accepted with its answer lost: the client gets its task, and exactly one execution runs', async () => {
    const bob = principal();
    const before = new Set(await executionNames());
    fault = 'lose-answer';
    let created: { taskId: string };
    try {
      created = ok(await bob.start());
    } finally {
      fault = undefined;
    }
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const added = (await executionNames()).filter((name) => !before.has(name));
    expect(added).toHaveLength(1);
    expect(ok(await bob.get(created.taskId)).status).toBe('working');
    await bob.cancel(created.taskId);
  });
});
