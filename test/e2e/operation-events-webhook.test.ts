/**
 * Operation events on the local stack: status sync puts `Operation Status Changed` events on
 * the local EventBridge endpoint, and `--events-webhook` posts each to a loopback server,
 * signed as Standard Webhooks says. The receiver here verifies every delivery with the
 * `standardwebhooks` package (an implementation independent of the server's) and the event
 * against schemas/operation-status-changed.schema.json.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { generateWebhookSecret } from '../../local/events/webhook-delivery.ts';
import { startTestStack, stopTestStack } from '../support/local-stack-fixture.ts';

/** What the tests read of a delivered event. */
interface ReceivedEvent {
  id: string;
  detail: Record<string, unknown> & { operationId: string; status: string };
  [field: string]: unknown;
}

/** The SDK's stream messages, as far as the tests read them. */
interface StreamMessage {
  type: string;
  task?: { taskId: string };
  result?: unknown;
}

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

const schema = JSON.parse(readFileSync(new URL('../../schemas/operation-status-changed.schema.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
ajv.addFormat('date-time', {
  type: 'string',
  validate: (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) && !Number.isNaN(Date.parse(value)),
});
const validateEvent = ajv.compile(schema);

const secret = generateWebhookSecret();
const received: Delivery[] = [];
/** Requests answered 503 before the receiver takes one, so the first event needs a retry. */
let refuseNext = 1;
let attempts = 0;
let receiver: Server;
let stack: LocalStack;
/** The owner id of the local principal's first event. */
let localOwner = '';

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      attempts++;
      if (refuseNext > 0) {
        refuseNext--;
        res.writeHead(503).end();
        return;
      }
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/async-mcp`);
  stack = await startTestStack({ eventsWebhook: { url, secret, backoffMs: 20 } });
});

afterAll(async () => {
  await stopTestStack({ stack });
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** Runs one tool call as a 2025-11-25 task with the v1 SDK client; its task id and final message. */
async function runTask(name: string, args: Record<string, unknown>): Promise<{ taskId: string; last: StreamMessage }> {
  const client = new LegacyClient({ name: 'operation-events', version: '1.0.0' });
  await client.connect(new LegacyTransport(stack.url));
  try {
    let taskId = '';
    let last: StreamMessage = { type: 'none' };
    for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task: { ttl: 600_000 } })) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      last = message as StreamMessage;
    }
    return { taskId, last };
  } finally {
    await client.close();
  }
}

/** The verified events of one operation, in the order they arrived. */
function eventsOf(taskId: string): Array<{ delivery: Delivery; event: ReceivedEvent }> {
  const webhook = new Webhook(secret);
  return received
    .map((delivery) => ({ delivery, event: webhook.verify(delivery.body, delivery.headers as Record<string, string>) as ReceivedEvent }))
    .filter(({ event }) => event.detail.operationId === taskId);
}

describe('operation events reach a loopback webhook, signed', () => {
  it('a task that completes: working then completed, each signed, schema-valid, without its arguments or result', async () => {
    const suite = `suite-${randomBytes(8).toString('hex')}`;
    const { taskId, last } = await runTask('run_test_suite', { suite, tests: 4, failures: 1, durationSeconds: 0 });
    expect(last.type).toBe('result');
    expect(JSON.stringify(last.result)).toContain(suite);
    await stack.drainEvents();

    const events = eventsOf(taskId);
    expect(events.map(({ event }) => event.detail.status)).toEqual(['working', 'completed']);
    for (const { delivery, event } of events) {
      expect(validateEvent(event), ajv.errorsText(validateEvent.errors)).toBe(true);
      expect(event).toMatchObject({ source: 'async-mcp', 'detail-type': 'Operation Status Changed', account: '000000000000', region: 'us-east-1' });
      // Standard Webhooks: the id is the event's, the timestamp is of the attempt, in seconds.
      expect(delivery.headers['webhook-id']).toBe(event.id);
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(delivery.headers['content-type']).toBe('application/json');
      // Events leave the trust boundary: no argument, no result text.
      expect(delivery.body).not.toContain(suite);
      expect(delivery.body).not.toContain('passed');
    }
    const completed = events[1]!.event.detail;
    expect(completed).toMatchObject({ tool: 'run_test_suite', dialect: 'tasks-2025-11-25', isError: false, resultBytes: expect.any(Number) });
    expect(completed.resultBytes).toBeGreaterThan(suite.length);
    expect(completed.completedAt).toEqual(expect.any(String));
    // The owner, keyed with the server key: neither the principal nor the table's unkeyed hash of it.
    expect(completed.ownerId).toMatch(/^[0-9a-f]{32}$/);
    expect(completed.ownerId).not.toBe(ownerIdFor('local'));
    expect(events.every(({ delivery }) => !delivery.body.includes(ownerIdFor('local')))).toBe(true);
    localOwner = completed.ownerId as string;
    expect(events[0]!.event.detail).not.toHaveProperty('isError');
  });

  it('a tool failure: failed with isError true and no result size', async () => {
    const { taskId } = await runTask('summarize_numbers', { numbers: [] });
    await stack.drainEvents();
    const final = eventsOf(taskId).at(-1)!.event;
    expect(validateEvent(final), ajv.errorsText(validateEvent.errors)).toBe(true);
    expect(final.detail).toMatchObject({ tool: 'summarize_numbers', status: 'failed', isError: true });
    expect(final.detail).not.toHaveProperty('resultBytes');
    // Stable: the same principal is the same owner in every event.
    expect(final.detail.ownerId).toBe(localOwner);
  });

  it('a durable function tool: working then completed from its durable status events, schema-valid, without its result', async () => {
    const { taskId, last } = await runTask('count_primes_durable', { below: 500, chunks: 2, pauseSeconds: 0 });
    expect(JSON.stringify(last.result)).toContain('"primes":95');
    await stack.drainEvents();
    const events = eventsOf(taskId);
    expect(events.map(({ event }) => event.detail.status)).toEqual(['working', 'completed']);
    for (const { event } of events) expect(validateEvent(event), ajv.errorsText(validateEvent.errors)).toBe(true);
    expect(events[1]!.event.detail).toMatchObject({ tool: 'count_primes_durable', isError: false, ownerId: localOwner });
    expect(events.every(({ delivery }) => !delivery.body.includes('"primes"'))).toBe(true);
  });

  it('a delivery the receiver refused is retried with the same webhook-id', () => {
    // The first attempt of all was answered 503; every event still arrived exactly once.
    expect(attempts).toBe(received.length + 1);
    const ids = received.map((delivery) => delivery.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
