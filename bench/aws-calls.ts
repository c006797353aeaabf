/**
 * AWS calls per operation, for each dialect: what the MCP request of a start, one poll,
 * the result and a cancel sends to DynamoDB and Step Functions, counted by the call
 * counter on the server's own clients, against the targets (start at most 2 DynamoDB
 * writes and 1 StartExecution; a poll exactly 1 GetItem and no DescribeExecution).
 * Status sync's calls for the run are listed apart: they are not on the request path.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AwsCallCounts } from '../lambdas/aws/aws-call-counter.ts';
import { legacyNotification, legacyRequest, modernRequest, type RawResponse } from '../test/support/raw-mcp.ts';
import { LONG_RUNNING_OPERATIONS, TASKS_EXTENSION } from './local-server-process.ts';
import { formatCalls, HANDLE_TOOLS_BOUND_SECONDS, type MeasuredStack } from './measured-stack.ts';

const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem'];
/** A run that finishes at once, and one that waits an hour (for polls and cancels of running work). */
const QUICK = { name: 'analyze_dataset', arguments: { rows: 10 } };
const WAITING = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } };
/** The protocol version of a client that knows no async dialect (handle tools). */
const PLAIN_VERSION = '2025-06-18';

/** One dialect's requests, over the server at `url`. */
export interface DialectSteps {
  name: string;
  /** Starts a run, returning its id. */
  start(args: { name: string; arguments: Record<string, unknown> }): Promise<string>;
  poll(id: string): Promise<RawResponse>;
  /** Fetches the result of a finished run; absent where the dialect has none apart from the poll. */
  result?(id: string): Promise<RawResponse>;
  cancel(id: string): Promise<RawResponse>;
  /** The status a poll answers once the run is done. */
  isDone(poll: RawResponse): boolean;
}

/** The async dialects' requests (and handle tools'), over the server at `url`. */
export function dialects(url: URL): DialectSteps[] {
  const resultOf = (r: RawResponse) => r.message?.result;
  return [
    {
      name: 'SEP-1391',
      start: async (args) => {
        const token = `bench-${Math.random().toString(36).slice(2)}`;
        need(await legacyRequest(url, 'tools/call', { ...args, operation: { token } }, { capabilities: LONG_RUNNING_OPERATIONS }));
        return token;
      },
      poll: (token) => legacyRequest(url, 'tools/async/status', { token }),
      result: (token) => legacyRequest(url, 'tools/async/result', { token }),
      // The cancellation is a notification naming the operation (no JSON-RPC id, no answer).
      cancel: (token) => legacyNotification(url, 'notifications/cancelled', { requestId: 'bench', _operation: { token } }),
      isDone: (r) => resultOf(r)?.status === 'completed',
    },
    {
      name: 'tasks 2026-07-28 (extension)',
      start: async (args) => need(await modernRequest(url, 'tools/call', args, { capabilities: TASKS_EXTENSION })).taskId,
      poll: (taskId) => modernRequest(url, 'tasks/get', { taskId }, { capabilities: TASKS_EXTENSION }),
      // The result is inlined in the tasks/get that sees the task completed.
      cancel: (taskId) => modernRequest(url, 'tasks/cancel', { taskId }, { capabilities: TASKS_EXTENSION }),
      isDone: (r) => resultOf(r)?.status === 'completed',
    },
    {
      name: 'tasks 2025-11-25',
      start: async (args) => need(await legacyRequest(url, 'tools/call', { ...args, task: {} })).task.taskId,
      poll: (taskId) => legacyRequest(url, 'tasks/get', { taskId }),
      result: (taskId) => legacyRequest(url, 'tasks/result', { taskId }),
      cancel: (taskId) => legacyRequest(url, 'tasks/cancel', { taskId }),
      isDone: (r) => resultOf(r)?.status === 'completed',
    },
    {
      name: 'handle tools (no async support)',
      // The run waits past the server's blocking bound, so the call hands off an operation id, as
      // a long call does for a client with no async support (one within the bound is just a call).
      start: async (args) => {
        const handedOff = need(await handleCall(url, args.name, { ...args.arguments, delaySeconds: HANDLE_TOOLS_BOUND_SECONDS + 1 }));
        const operationId = handedOff.structuredContent?.operationId;
        if (typeof operationId !== 'string')
          throw new Error(`handle tools: the call did not hand off an operation id: ${JSON.stringify(handedOff).slice(0, 300)}`);
        return operationId;
      },
      poll: (operationId) => handleCall(url, 'operation_status', { operationId }),
      result: (operationId) => handleCall(url, 'operation_result', { operationId }),
      cancel: (operationId) => handleCall(url, 'operation_cancel', { operationId }),
      isDone: (r) => resultOf(r)?.structuredContent?.status === 'completed',
    },
  ];
}

function handleCall(url: URL, name: string, args: Record<string, unknown>) {
  return legacyRequest(url, 'tools/call', { name, arguments: args }, { version: PLAIN_VERSION });
}

/** The result of a response that must have one. */
function need(response: RawResponse) {
  if (!response.message?.result) throw new Error(`expected a result, got HTTP ${response.status}: ${response.text.slice(0, 300)}`);
  return response.message.result;
}

/** Polls (uncounted) until the run is done. */
export async function untilDone(measured: MeasuredStack, steps: DialectSteps, id: string): Promise<void> {
  await measured.waiting(async () => {
    const deadline = Date.now() + 60_000;
    while (!steps.isDone(await steps.poll(id))) {
      if (Date.now() > deadline) throw new Error(`${steps.name}: ${id} did not complete`);
      await sleep(50);
    }
  });
}

/** Prints the calls table for every dialect and the sync path. */
export async function awsCallsPerOperation(measured: MeasuredStack): Promise<void> {
  const url = measured.stack.url;
  console.log('AWS calls per operation (the MCP request only; status sync apart), analyze_dataset:');
  const row = (dialect: string, step: string, calls: AwsCallCounts, verdict = '') =>
    console.log(`  ${dialect.padEnd(34)} ${step.padEnd(8)} ${formatCalls(calls).padEnd(76)} ${verdict}`);
  for (const steps of dialects(url)) {
    let id = '';
    // The whole run, so status sync's calls for all its events are in; the waiting polls are not counted.
    const start = await measured.measure(async () => {
      id = await steps.start(QUICK);
      await untilDone(measured, steps, id);
    });
    const result = await measured.measure(() => (steps.result ?? steps.poll)(id).then(need));
    let running = '';
    await measured.waiting(async () => (running = await steps.start(WAITING)));
    const poll = await measured.measure(() => steps.poll(running).then(need));
    const cancel = await measured.measure(() => steps.cancel(running));
    row(steps.name, 'start', start.request, startVerdict(start.request));
    row(steps.name, 'poll', poll.request, pollVerdict(poll.request));
    row(steps.name, steps.result ? 'result' : 'result*', result.request);
    row(steps.name, 'cancel', cancel.request);
    row(steps.name, 'sync**', start.statusSync);
    row(steps.name, 'workers', start.background);
  }
  const sync = await measured.measure(() => legacyRequest(url, 'tools/call', { name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } }).then(need));
  row('sync (quick_calculation, EXPRESS)', 'call', sync.request);
  console.log('  poll: of a run still working. * the result is inlined in the tasks/get that sees the task completed.');
  console.log('  ** status sync for the whole started run (its RUNNING and SUCCEEDED events) and, below it, its workers: off the request path.');
}

function startVerdict(calls: AwsCallCounts): string {
  const writes = WRITES.reduce((sum, name) => sum + (calls[name] ?? 0), 0);
  const met = writes <= 2 && (calls.StartExecution ?? 0) === 1;
  return `target <= 2 writes + 1 StartExecution: ${met ? 'met' : 'NOT met'} (${writes} writes)`;
}

function pollVerdict(calls: AwsCallCounts): string {
  const only = Object.keys(calls).length === 1 && calls.GetItem === 1;
  return `target 1 GetItem, 0 DescribeExecution: ${only ? 'met' : 'NOT met'}`;
}
