/**
 * Least privilege, measured: the auth=none assembly runs a representative set of flows (every
 * repository tool, through each dialect), the IAM authority records every call each role makes,
 * and every grant of the template's roles that no call used must be listed below with the
 * reason it stays. A new grant nothing exercises fails this test until it goes or gets a reason.
 */
import { randomUUID } from 'node:crypto';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetCsv } from '../../../lambdas/examples/dataset-csv.ts';
import {
  type DeployedLocalStack,
  describeUnusedGrants,
  type ExpectedUnusedGrant,
  rolesForTools,
  unexpectedUnusedGrants,
  unusedGrants,
} from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';
import { STATE_MACHINE_LOG_DELIVERY_ACTIONS } from '../../support/log-delivery-actions.ts';

/** The tools the flows below run; another tool folder (a user's own) has no flow here, so its roles are not measured. */
const REPOSITORY_TOOLS = [
  'analyze_dataset',
  'approve_deployment',
  'approve_deployment_durable',
  'count_primes_durable',
  'export_dataset',
  'quick_calculation',
  'run_test_suite',
  'summarize_numbers',
];

const TASKS = { 'io.modelcontextprotocol/tasks': {} };
const CAN_ASK = { elicitation: {}, extensions: TASKS };
/** A run that waits this long (scaled by the test stack's waitTimeScale 0.01: about 30 s) is still running when cancelled. */
const LONG_DELAY_SECONDS = 3000;

const LAMBDA_LOGS =
  "Lambda's runtime writes the function's console lines to its log group with these; the local runtime writes no CloudWatch logs (the lines go to the console and --data)";
const MACHINE_LOGS =
  "Step Functions sets up the machine's LoggingConfiguration (log delivery to its log group) with these when the machine is created or updated, a deploy-time call; the local facade delivers no logs";
const SPILL =
  "the server writes a result over 64 KB to the bucket when its operation ends; no repository tool returns one (export_dataset's worker writes its own CSV under the worker prefix)";

/** Grants the flows below do not use, each with why it stays. Anything else unused fails the test. */
const EXPECTED: ExpectedUnusedGrant[] = [
  ...['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({ role: '*', action, resource: 'arn:aws:logs:*:log-group:*', reason: LAMBDA_LOGS })),
  ...STATE_MACHINE_LOG_DELIVERY_ACTIONS.map((action) => ({ role: '*StateMachineRole*', action, resource: '*', reason: MACHINE_LOGS })),
  ...['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'].map((action) => ({
    role: 'ServerMcpRole*',
    action,
    resource: '*/index/byOwner',
    reason:
      "the table grant names the byOwner index beside the table for every action of one statement; item actions never apply to an index (a candidate to trim: only Query needs the index's ARN)",
  })),
  {
    role: 'ServerMcpRole*',
    action: 'dynamodb:Query',
    resource: 'arn:aws:dynamodb:*:table/*OperationsTable*',
    reason:
      "the server queries only the byOwner index (a principal's operations); the table's ARN is in the statement for the item actions (a candidate to trim)",
  },
  ...['ServerMcpRole*', 'ServerStatusSyncHandlerRole*', '*durableHandlerRole*'].map((role) => ({
    role,
    action: 's3:PutObject',
    resource: '*/results/*',
    reason: SPILL,
  })),
  {
    role: 'ServerStatusSyncHandlerRole*',
    action: 'states:DescribeExecution',
    reason:
      "status sync reads the execution only when EventBridge left its input or output out of the event (over 256 KB); no repository tool's run comes near",
  },
  {
    role: 'ServerStatusSyncHandlerRole*',
    action: 'states:StopExecution',
    reason:
      'status sync stops an execution whose operation already ended (expired, or cancelled while its start was in flight); these flows end every operation before its execution',
  },
  {
    role: '*durableHandlerRole*',
    action: 'lambda:GetDurableExecutionState',
    reason:
      "the durable execution SDK reads further pages of its execution's state only when the invocation's InitialExecutionState has a NextMarker (a state too large for the invoke payload); the local durable service, as Lambda for a small state, sends every operation in the invocation, and no repository tool's run comes near",
  },
  {
    role: 'ServerStatusSyncHandlerRole*',
    action: 'lambda:StopDurableExecution',
    reason:
      "status sync stops a durable execution whose operation already ended (expired, or cancelled while its start was in flight), as it does a state machine's; these flows end every operation before its execution",
  },
  {
    role: 'ServerStatusSyncHandlerRole*',
    action: 'lambda:ListDurableExecutionsByFunction',
    reason:
      "status sync reads an execution by the ARN its status-change event carries; it finds one by name (the ARN a record holds until its start answers) only to stop an execution whose operation already ended, as above (the MCP function's describe and stop do find them so)",
  },
  {
    role: 'ServerStatusSyncHandlerRole*',
    action: 'sqs:SendMessage',
    resource: '*StatusSyncDeadLetterQueue*',
    reason:
      "Lambda sends an asynchronous invocation that failed every retry to the function's OnFailure destination with the function's role; no invocation fails here, and the local runner dead-letters through the rule's own queue",
  },
  {
    role: 'ServerMcpRole*',
    action: 'dynamodb:DeleteItem',
    resource: 'arn:aws:dynamodb:*:table/*OperationsTable*',
    reason:
      "the MCP function deletes a principal's slot item when it frees the last slot; whether it or status sync frees that slot is a race, so some runs never see the MCP function do it",
    sometimesUsed: true,
  },
  ...['sqs:GetQueueAttributes', 'sqs:GetQueueUrl'].map((action) => ({
    role: 'ServerStatusSyncHandlerRole*',
    action,
    reason: "granted with SendMessage by the queue's grantSendMessages; Lambda's OnFailure destination needs only sqs:SendMessage (a candidate to trim)",
  })),
  // The Events extension: these flows subscribe no webhook, so no occurrence becomes a delivery job.
  ...['ServerStatusSyncHandlerRole*', 'WorkersreportprogressRole*', 'WorkersrequestinputRole*', '*durableHandlerRole*'].map((role) => ({
    role,
    action: 'dynamodb:Query',
    resource: '*/index/byOwner',
    reason:
      "the webhook fan-out lists an owner's subscriptions (a byOwner Query) only when the owner's subscription slots item holds a live one (lambdas/events/webhook-fan-out.ts); no flow here subscribes one (the Events webhook tests do)",
  })),
  ...['ServerMcpRole*', 'ServerStatusSyncHandlerRole*', 'WorkersreportprogressRole*', 'WorkersrequestinputRole*', '*durableHandlerRole*'].map((role) => ({
    role,
    action: 'sqs:SendMessage',
    resource: '*EventsQueue*',
    reason:
      "an appended occurrence is enqueued as a delivery job only for a matching webhook subscription (and the MCP function enqueues only a subscription's verification); no flow here subscribes one (the Events webhook tests do)",
  })),
  ...['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'].map((action) => ({
    role: 'ServerEventsDeliveryRole*',
    action,
    resource: '*EventsQueue*',
    reason:
      "the delivery queue's event source mapping deletes a job the delivery function finished and backs off a retried one with these; with no webhook subscription no job is ever enqueued, so the mapping's polls receive nothing",
  })),
  ...['sqs:GetQueueAttributes', 'sqs:GetQueueUrl'].map((action) => ({
    role: 'ServerEventsDeliveryRole*',
    action,
    resource: '*EventsQueue*',
    reason:
      "granted by SqsEventSource's grantConsumeMessages; Lambda reads the queue's attributes when the mapping is created (a deploy-time call the local mapping skips), and nothing calls GetQueueUrl (a candidate to trim)",
  })),
  {
    role: 'ServerEventsDeliveryRole*',
    action: 'secretsmanager:GetSecretValue',
    reason: "the delivery function reads the server key to open a subscription's sealed signing secret when it runs a job; no job runs in these flows",
  },
  ...['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'].map((action) => ({
    role: 'ServerEventsDeliveryRole*',
    action,
    resource: 'arn:aws:dynamodb:*:table/*OperationsTable*',
    reason:
      "a delivery job reads its subscription and event items, saves the subscription's delivery status, and deletes a terminated subscription (SUB#* and EVT#* items only); no job runs in these flows",
  })),
];

let stack: DeployedLocalStack;
let client: LegacyClient;

beforeAll(async () => {
  ({ stack } = await startAssemblyStack(await deployedAssembly(NO_AUTH)));
  // A client that can answer questions gets a session id signed with the server key secret.
  client = new LegacyClient({ name: 'as-deployed-least-privilege', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  await client.connect(new LegacyTransport(stack.url));
}, 240_000);
afterAll(async () => {
  await client?.close();
  await stack?.close();
});

describe('every repository tool, through the dialects', () => {
  it('quick_calculation, synchronously', async () => {
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } });
    expect(result.structuredContent).toEqual({ result: 42 });
  });

  it('summarize_numbers, as a 2025-11-25 task streamed to its result', async () => {
    const stream = client.experimental.tasks.callToolStream({ name: 'summarize_numbers', arguments: { numbers: [3, 4, 5] } }, undefined, {
      task: { ttl: 600_000 },
    });
    let structured: Record<string, number> | undefined;
    for await (const message of stream) {
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') structured = message.result.structuredContent as Record<string, number>;
    }
    expect(structured).toMatchObject({ count: 3, sum: 12, min: 3, max: 5 });
  });

  it('analyze_dataset over SEP-1391: start, status, result; and a second one cancelled', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 120_000, seed: 5 }, operation: { token } }));
    const status = (t: string) => legacyRequest(stack.url, 'tools/async/status', { token: t });
    await pollUntilStatus(() => status(token), ['completed'], { interval: 200, timeout: 60_000 });
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.structuredContent.count).toBe(120_000);

    const cancelled = `tok-${randomUUID()}`;
    ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'analyze_dataset',
        arguments: { rows: 10, delaySeconds: LONG_DELAY_SECONDS },
        operation: { token: cancelled },
      }),
    );
    await pollUntilStatus(() => status(cancelled), ['working']);
    expect((await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 1, _operation: { token: cancelled } })).status).toBe(202);
    await pollUntilStatus(() => status(cancelled), ['canceled'], { timeout: 30_000 });
  });

  it('analyze_dataset as a 2025-11-25 task, cancelled with tasks/cancel while no other operation is active', async () => {
    // Every earlier run's end delivered first: the cancel then frees the owner's last active
    // slot, and the server drops the emptied slot item (its one DeleteItem on the table).
    await stack.drainEvents();
    const created = ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'analyze_dataset',
        arguments: { rows: 10, delaySeconds: LONG_DELAY_SECONDS },
        task: { ttl: 600_000 },
      }),
    );
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['working']);
    expect(ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId })).status).toBe('cancelled');
  });

  it('approve_deployment as a 2026-07-28 task: its question answered with tasks/update', async () => {
    const created = ok(
      await modernRequest(
        stack.url,
        'tools/call',
        { name: 'approve_deployment', arguments: { environment: 'staging', changes: ['api: v2.3.1'] } },
        { capabilities: CAN_ASK },
      ),
    );
    const taskId = created.taskId as string;
    const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: CAN_ASK });
    await pollUntilStatus(get, ['input_required'], { timeout: 30_000 });
    ok(
      await modernRequest(
        stack.url,
        'tasks/update',
        { taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'ship it' } } } },
        { capabilities: CAN_ASK },
      ),
    );
    const done = await pollUntilStatus(get, ['completed', 'failed', 'cancelled'], { timeout: 30_000 });
    expect(done.result.structuredContent).toMatchObject({ environment: 'staging', deployed: true, comment: 'ship it' });
  });

  it('approve_deployment as a 2026-07-28 task: its question declined', async () => {
    const created = ok(
      await modernRequest(
        stack.url,
        'tools/call',
        { name: 'approve_deployment', arguments: { environment: 'production', changes: ['api: v2.3.1'] } },
        { capabilities: CAN_ASK },
      ),
    );
    const taskId = created.taskId as string;
    const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: CAN_ASK });
    await pollUntilStatus(get, ['input_required'], { timeout: 30_000 });
    ok(await modernRequest(stack.url, 'tasks/update', { taskId, inputResponses: { approval: { action: 'decline' } } }, { capabilities: CAN_ASK }));
    const done = await pollUntilStatus(get, ['completed', 'failed', 'cancelled'], { timeout: 30_000 });
    // The state's Catch heard Mcp.InputDeclined, which the server sent with SendTaskFailure.
    expect(done.result.structuredContent).toMatchObject({ environment: 'production', deployed: false, decision: 'decline' });
  });

  it('count_primes_durable over SEP-1391: start, status, result; and a second one cancelled', async () => {
    const token = `tok-${randomUUID()}`;
    ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'count_primes_durable',
        arguments: { below: 1000, chunks: 4, pauseSeconds: 1 },
        operation: { token },
      }),
    );
    const status = (t: string) => legacyRequest(stack.url, 'tools/async/status', { token: t });
    await pollUntilStatus(() => status(token), ['completed'], { interval: 200, timeout: 60_000 });
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.structuredContent).toMatchObject({ below: 1000, primes: 168, largest: 997 });

    // Stopped with StopDurableExecution while its pause runs.
    const cancelled = `tok-${randomUUID()}`;
    ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'count_primes_durable',
        arguments: { below: 1000, pauseSeconds: 60 },
        operation: { token: cancelled },
      }),
    );
    await pollUntilStatus(() => status(cancelled), ['working'], { timeout: 30_000 });
    expect((await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 1, _operation: { token: cancelled } })).status).toBe(202);
    await pollUntilStatus(() => status(cancelled), ['canceled'], { timeout: 30_000 });
  });

  it('approve_deployment_durable as a 2026-07-28 task: its question answered (a callback success), then one declined (a callback failure)', async () => {
    const ask = async (environment: string) => {
      const created = ok(
        await modernRequest(
          stack.url,
          'tools/call',
          { name: 'approve_deployment_durable', arguments: { environment, changes: ['api: v2.3.1'] } },
          { capabilities: CAN_ASK },
        ),
      );
      const taskId = created.taskId as string;
      const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: CAN_ASK });
      await pollUntilStatus(get, ['input_required'], { timeout: 60_000 });
      return { taskId, get };
    };
    const accepted = await ask('staging');
    ok(
      await modernRequest(
        stack.url,
        'tasks/update',
        { taskId: accepted.taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'ship it' } } } },
        { capabilities: CAN_ASK },
      ),
    );
    const deployed = await pollUntilStatus(accepted.get, ['completed', 'failed', 'cancelled'], { timeout: 60_000 });
    expect(deployed.result.structuredContent).toMatchObject({ environment: 'staging', deployed: true, comment: 'ship it' });

    const declined = await ask('production');
    ok(
      await modernRequest(
        stack.url,
        'tasks/update',
        { taskId: declined.taskId, inputResponses: { approval: { action: 'decline' } } },
        { capabilities: CAN_ASK },
      ),
    );
    const kept = await pollUntilStatus(declined.get, ['completed', 'failed', 'cancelled'], { timeout: 60_000 });
    expect(kept.result.structuredContent).toMatchObject({ environment: 'production', deployed: false, decision: 'decline' });
  });

  it("export_dataset's large result, read back with resources/read", async () => {
    const created = ok(await legacyRequest(stack.url, 'tools/call', { name: 'export_dataset', arguments: { rows: 100_000, seed: 7 }, task: { ttl: 600_000 } }));
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['completed'], { timeout: 60_000 });
    const link = ok(await legacyRequest(stack.url, 'tasks/result', { taskId })).content[0];
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: link.uri }));
    expect(read.contents[0].text).toBe(datasetCsv(100_000, 7));
  });

  it('run_test_suite, synchronously with progress', async () => {
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'run_test_suite', arguments: { suite: 'unit', tests: 12, failures: 2, durationSeconds: 1 } }, undefined, {
      onprogress: (p) => progress.push(p),
      timeout: 60_000,
    });
    expect(result.structuredContent).toMatchObject({ suite: 'unit', passed: 10, failed: 2 });
    expect(progress.length).toBeGreaterThan(0);
  });
});

describe('least privilege', () => {
  it('every grant of every role was used by these flows, or is listed with the reason it stays', async () => {
    await stack.drainEvents();
    const decisions = stack.authority.decisions();
    expect(decisions.filter((d) => !d.allowed)).toEqual([]);
    const unused = unusedGrants(rolesForTools(stack.model, REPOSITORY_TOOLS), decisions);
    // The grants no flow exercised and no reason explains are listed with the failure below; a green run prints nothing.
    const unexplained = unexpectedUnusedGrants(unused, EXPECTED);
    expect(unexplained, `unused grants with no reason in EXPECTED:\n${describeUnusedGrants(unexplained)}`).toEqual([]);
    // An expectation nothing matches any more is stale: the grant went, so its reason goes too.
    const stale = EXPECTED.filter((e) => !e.sometimesUsed && unexpectedUnusedGrants(unused, [e]).length === unused.length);
    expect(stale).toEqual([]);
  });
});
