/**
 * Issue 27.5: the local PutEvents endpoint of `npm start` takes only events signed (SigV4) with
 * the stack's own per-run key. Every event it accepts goes on to `--events-webhook` with a valid
 * Standard Webhooks signature, so an event another process could put unsigned would arrive as
 * genuine. The local AWS endpoints also listen on loopback only, whatever `--host` says.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../local/events/webhook-delivery.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack, stopTestStack } from '../support/local-stack-fixture.ts';

const FORGED = 'forged-by-another-process';
const received: string[] = [];
let receiver: Server;
let stack: LocalStack;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`);
  // `--host 0.0.0.0`: the MCP endpoint is served on every interface; the tests talk to loopback only.
  stack = await startTestStack({ host: '0.0.0.0', eventsWebhook: { url, secret: generateWebhookSecret(), maxAttempts: 1 } });
});

afterAll(async () => {
  await stopTestStack({ stack });
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** The PutEvents endpoint's port on 127.0.0.1, whatever address its URL names. */
function eventsOnLoopback(): URL {
  const url = new URL(stack.eventsEndpoint);
  url.hostname = '127.0.0.1';
  return url;
}

const forgedEntry = { Source: 'async-mcp', DetailType: 'Operation Status Changed', Detail: JSON.stringify({ operationId: FORGED, status: 'completed' }) };

describe('forged local events', () => {
  it('an unsigned PutEvents from another client is refused, and nothing reaches the webhook', async () => {
    const response = await fetch(eventsOnLoopback(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
      body: JSON.stringify({ Entries: [forgedEntry] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ __type: 'MissingAuthenticationTokenException' });

    // Signed, but with a key other than the stack's (the fixed key local stacks used to take).
    const other = new EventBridgeClient({
      region: 'us-east-1',
      endpoint: eventsOnLoopback().href,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    try {
      await expect(other.send(new PutEventsCommand({ Entries: [forgedEntry] }))).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
    } finally {
      other.destroy();
    }

    // The stack's own client, with its per-run key, still puts: the receiver does get events.
    const own = await stack.awsClients.eventBridge.send(
      new PutEventsCommand({ Entries: [{ ...forgedEntry, Detail: JSON.stringify({ operationId: 'genuine', status: 'completed' }) }] }),
    );
    expect(own.FailedEntryCount).toBe(0);
    await stack.drainEvents();
    expect(received.some((body) => body.includes('genuine'))).toBe(true);
    expect(received.filter((body) => body.includes(FORGED))).toEqual([]);
  });

  it('the local AWS endpoints bind 127.0.0.1 when --host is 0.0.0.0; the MCP endpoint follows --host', () => {
    expect(stack.url.hostname).toBe('0.0.0.0');
    const bound = {
      events: new URL(stack.eventsEndpoint).hostname,
      results: new URL(stack.results.endpoint).hostname,
      dynamodb: new URL(stack.dynamo.endpoint).hostname,
      stepfunctions: new URL(stack.sfnEndpoint).hostname,
    };
    expect(bound).toEqual({ events: '127.0.0.1', results: '127.0.0.1', dynamodb: '127.0.0.1', stepfunctions: '127.0.0.1' });
  });
});
