/**
 * MCP Events webhooks as deployed (issue 29, "It runs as deployed"): the default assembly
 * (AWS_IAM Function URL) on the local runner, the caller authenticated by SigV4 with the local
 * credentials. The Vercel AI SDK (`@ai-sdk/mcp`) subscribes to operation.finished for an
 * analyze_dataset task through the signed fetch; the MCP function verifies the 127.0.0.1
 * callback, status sync appends the end and enqueues the job on the local SQS, and the bundled
 * delivery function posts the signed occurrence, which the AI SDK's handler and the
 * standardwebhooks package both verify. A poll then returns the same eventId.
 */
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
  type Experimental_MCPEventStore,
  type Experimental_MCPEventSubscription,
} from '@ai-sdk/mcp';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sigV4Fetch } from '../../../client/index.ts';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, IAM_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { expectStatsOf } from '../../support/expected-stats.ts';
import { jsonRpcMessagesOf, MODERN_VERSION } from '../../support/raw-mcp.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const SIGV4 = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const signed = sigV4Fetch(SIGV4);

let stack: DeployedLocalStack;
let logs: string[];
let receiver: WebhookReceiver;

beforeAll(async () => {
  ({ stack, logs } = await startAssemblyStack(await deployedAssembly(IAM_AUTH)));
  receiver = await startWebhookReceiver();
}, 600_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

let nextId = 1;
/** A 2026-07-28 request signed with the local credentials; its JSON-RPC result (or the error, thrown). */
// biome-ignore lint/suspicious/noExplicitAny: the test reads raw JSON-RPC results field by field; each expect checks the shape
async function rpc(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}): Promise<any> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'events-as-deployed', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  const response = await signed(stack.url.href, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } }),
  });
  const text = await response.text();
  const message = jsonRpcMessagesOf(text)
    .filter((m) => 'result' in m || 'error' in m)
    .at(-1);
  if (!message || message.error) throw new Error(`${method} answered ${response.status}: ${text.slice(0, 500)}`);
  return message.result;
}

function memoryEventStore(): Experimental_MCPEventStore & { saved: Map<string, Experimental_MCPEventSubscription> } {
  const saved = new Map<string, Experimental_MCPEventSubscription>();
  return {
    saved,
    get: async (key) => saved.get(key),
    getById: async (id) => [...saved.values()].find((s) => s.id === id),
    set: async (subscription) => void saved.set(subscription.key, structuredClone(subscription)),
    update: async (key, patch) => {
      const current = saved.get(key);
      if (current) saved.set(key, { ...current, ...patch });
    },
    delete: async (key) => void saved.delete(key),
  };
}

describe('MCP Events webhooks as deployed, IAM-authenticated', () => {
  it('the AI SDK subscribes with a 127.0.0.1 callback, and the bundled delivery function posts the signed operation.finished with the statistics inline; a poll returns the same eventId', async () => {
    const store = memoryEventStore();
    const received: Experimental_MCPEvent[] = [];
    const handler = createMCPEventWebhook({ store, onEvent: async ({ event }) => void received.push(event) });
    receiver.handle = async (request) => (new URL(request.url).pathname === '/ai-sdk' ? handler(request) : new Response(null, { status: 404 }));
    const client = await createMCPClient({
      transport: { type: 'http', url: stack.url.href, fetch: (input, init) => signed(input instanceof Request ? input.url : String(input), init ?? {}) },
      experimental_events: { store },
    });
    try {
      const { events } = await client.experimental_events.list();
      expect(events.find((e) => e.name === 'operation.finished')?.delivery).toEqual(['poll', 'push', 'webhook']);
      const { taskId } = await rpc('tools/call', { name: 'analyze_dataset', arguments: { rows: 1000, seed: 21, delaySeconds: 300 } }, TASKS);
      const subscribed = await client.experimental_events.subscribe({
        name: 'operation.finished',
        arguments: { operationId: taskId },
        delivery: { mode: 'webhook', url: `${receiver.origin}/ai-sdk`, allowInsecureLocalhost: true },
      });
      expect(subscribed.id).toMatch(/^sub_[0-9a-f]{32}$/);

      await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 120_000, interval: 200 });
      const event = received[0] as Experimental_MCPEvent;
      expect(event).toMatchObject({ name: 'operation.finished', data: { operationId: taskId, tool: 'analyze_dataset', status: 'completed', isError: false } });
      expectStatsOf((event.data.result as { structuredContent: Record<string, unknown> }).structuredContent, 1000, 21);

      // The verification came first, from the MCP function; the delivery from the bundled delivery function.
      // The receiver records a POST once it is answered, a moment after the handler saw it.
      await vi.waitFor(() => expect(receiver.posts.some((post) => post.headers.get('webhook-id') === event.eventId)).toBe(true), {
        timeout: 10_000,
        interval: 50,
      });
      const posts = receiver.posts.filter((post) => post.path.startsWith('/ai-sdk'));
      expect(JSON.parse(posts[0]?.body ?? '{}')).toMatchObject({ type: 'verification' });
      const delivery = posts.find((post) => post.headers.get('webhook-id') === event.eventId);
      expect(delivery?.status).toBe(204);
      expect(delivery?.headers.get('x-mcp-subscription-id')).toBe(subscribed.id);
      // An off-the-shelf verifier agrees with the AI SDK's: signed with the secret the client chose.
      const secret = [...store.saved.values()][0]?.delivery.secret ?? '';
      expect(new Webhook(secret).verify(delivery?.body ?? '', Object.fromEntries(delivery?.headers ?? []))).toMatchObject({ eventId: event.eventId });
      const mapping = stack.model.eventSourceMappings[0];
      expect(logs.some((line) => line.startsWith(`[${mapping?.functionLogicalId}]`))).toBe(true);

      // Poll and webhook: the same occurrence under the same eventId (a poll reads a moment behind the writes).
      const polled = await vi.waitFor(
        async () => {
          const page = await rpc('events/poll', { name: 'operation.finished', arguments: { operationId: taskId }, cursor: subscribed.cursor ?? null });
          expect(page.events).toHaveLength(1);
          return page.events.map((e: { eventId: string }) => e.eventId);
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(polled).toEqual([event.eventId]);
      await client.experimental_events.unsubscribe({ id: subscribed.id });
    } finally {
      await client.close();
    }
  });
});
