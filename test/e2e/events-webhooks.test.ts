/**
 * Webhook delivery of MCP Events (SEP-3415) on `npm start -- --oauth-dev`, the way ChatGPT's
 * profile uses it, with the Vercel AI SDK (`@ai-sdk/mcp`) as the real third-party client and
 * its `experimental_createMCPEventWebhook` as the receiver; then, with raw JSON-RPC, what the
 * SDK does not exercise: a receiver answering 503 first, a subscription left to expire, a
 * secret rotation, a callback that does not echo the challenge, and isolation between
 * principals. Every callback is on 127.0.0.1.
 */
import { createHmac } from 'node:crypto';
import {
  experimental_createMCPClient as createMCPClient,
  experimental_createMCPEventWebhook as createMCPEventWebhook,
  type Experimental_MCPEvent,
  type Experimental_MCPEventStore,
  type Experimental_MCPEventSubscription,
} from '@ai-sdk/mcp';
import { auth } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { expectStatsOf } from '../support/expected-stats.ts';
import { MemoryOAuthProvider, signInWithFetch } from '../support/oauth-dev-client.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStackWithDevAuthorization;
let receiver: WebhookReceiver;
const tokens: Record<string, string> = {};

/** A bearer token for `user`, through the development server's full sign-in. */
async function signIn(user: string): Promise<string> {
  const provider = new MemoryOAuthProvider(`events ${user}`);
  expect(await auth(provider, { serverUrl: stack.url, scope: DEV_MCP_SCOPE })).toBe('REDIRECT');
  const pages = await signInWithFetch(provider.authorizationUrls[0] as URL, user);
  expect(
    await auth(provider, { serverUrl: stack.url, authorizationCode: pages.callback.get('code') as string, iss: pages.callback.get('iss') as string }),
  ).toBe('AUTHORIZED');
  return (provider.savedTokens as { access_token: string }).access_token;
}

beforeAll(async () => {
  stack = await startLocalStackWithDevAuthorization(
    // Retries a second apart, and TTLs as short as a second, so the tests wait seconds, not minutes.
    { toolsDir: 'state-machines', port: 0, waitTimeScale: 0.01, events: { delivery: { baseDelaySeconds: 1 }, minSubscriptionTtlSeconds: 1 } },
    { announce: () => undefined },
  );
  receiver = await startWebhookReceiver();
  tokens.alice = await signIn('alice');
  tokens.bob = await signIn('bob');
});
afterAll(async () => {
  await stack?.drainEvents();
  await stack?.close();
  await receiver?.close();
});

const as = (user: string) => ({ authorization: `Bearer ${tokens[user]}` });
const rpc = (user: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) =>
  modernRequest(stack.url, method, params, { headers: as(user), capabilities });

/** A long analyze_dataset task of `user` (a few seconds at the test's time scale). */
async function startAnalysis(user: string, seed: number, delaySeconds = 300): Promise<string> {
  return ok(await rpc(user, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 1000, seed, delaySeconds } }, TASKS)).taskId;
}

function memoryEventStore(): Experimental_MCPEventStore {
  const saved = new Map<string, Experimental_MCPEventSubscription>();
  return {
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

/** Answers the verification by echoing the challenge; event bodies by `answer`. */
function echoingReceiver(answer: (post: { body: Record<string, unknown>; request: Request }) => Response) {
  return async (request: Request) => {
    const body = (await request.json()) as Record<string, unknown>;
    if (body.type === 'verification') return Response.json({ challenge: body.challenge });
    return answer({ body, request });
  };
}

/** Standard Webhooks: whether `secret` verifies one of the signatures on a received POST. */
function verifies(post: { headers: Headers; body: string }, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${post.headers.get('webhook-id')}.${post.headers.get('webhook-timestamp')}.${post.body}`)
    .digest('base64');
  return (post.headers.get('webhook-signature') ?? '').split(' ').includes(`v1,${expected}`);
}

const postsTo = (path: string) => receiver.posts.filter((post) => post.path.startsWith(path));

describe('the Vercel AI SDK as the client, its webhook handler as the receiver', () => {
  it('discovers events, subscribes to operation.finished for an analyze_dataset task, and receives the signed delivery with the statistics inline', async () => {
    const store = memoryEventStore();
    const received: Experimental_MCPEvent[] = [];
    const handler = createMCPEventWebhook({ store, onEvent: async ({ event }) => void received.push(event) });
    receiver.handle = async (request) => (new URL(request.url).pathname === '/ai-sdk' ? handler(request) : new Response(null, { status: 404 }));
    const client = await createMCPClient({ transport: { type: 'http', url: stack.url.href, headers: as('alice') }, experimental_events: { store } });
    try {
      const { events } = await client.experimental_events.list();
      expect(events.find((e) => e.name === 'operation.finished')?.delivery).toEqual(['poll', 'push', 'webhook']);
      const taskId = await startAnalysis('alice', 11);
      const subscribed = await client.experimental_events.subscribe({
        name: 'operation.finished',
        arguments: { operationId: taskId },
        delivery: { mode: 'webhook', url: `${receiver.origin}/ai-sdk`, allowInsecureLocalhost: true },
      });
      expect(subscribed.id).toMatch(/^sub_[0-9a-f]{32}$/);
      expect(Date.parse(subscribed.refreshBefore as string)).toBeGreaterThan(Date.now());

      await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 60_000, interval: 200 });
      const event = received[0] as Experimental_MCPEvent;
      expect(event).toMatchObject({ name: 'operation.finished', data: { operationId: taskId, tool: 'analyze_dataset', status: 'completed', isError: false } });
      expectStatsOf((event.data.result as { structuredContent: Record<string, unknown> }).structuredContent, 1000, 11);

      // The verification came first, signed, and every POST carried the subscription id.
      const posts = postsTo('/ai-sdk');
      expect(JSON.parse(posts[0]?.body ?? '{}')).toMatchObject({ type: 'verification' });
      expect(posts[0]?.headers.get('webhook-id')).toMatch(/^msg_verification_/);
      const delivery = posts.find((post) => post.headers.get('webhook-id') === event.eventId);
      expect(delivery?.headers.get('x-mcp-subscription-id')).toBe(subscribed.id);
      expect(delivery?.status).toBe(204);

      // Poll and webhook deliver the same occurrence under the same eventId. A poll reads a second behind now
      // (writes still landing), so the poll waits for what the webhook already delivered.
      const replayed = await vi.waitFor(
        async () => {
          const polled = ok(
            await rpc('alice', 'events/poll', { name: 'operation.finished', arguments: { operationId: taskId }, cursor: subscribed.cursor ?? null }),
          );
          expect(polled.truncated).toBe(false);
          expect(polled.events).toHaveLength(1);
          return polled.events.map((e: { eventId: string }) => e.eventId);
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(replayed).toEqual([event.eventId]);
      // The body's cursor is the subscription's watermark: persisting it never skips what was not yet acknowledged.
      expect(event.cursor).toBe(subscribed.cursor);

      await client.experimental_events.unsubscribe({ id: subscribed.id });
    } finally {
      await client.close();
    }
  });
});

describe('webhook delivery with raw JSON-RPC', () => {
  const subscribe = (user: string, path: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    rpc(user, 'events/subscribe', {
      name: 'operation.finished',
      arguments: args,
      delivery: { mode: 'webhook', url: `${receiver.origin}${path}`, secret: generateWebhookSecret() },
      cursor: null,
      ...extra,
    });

  it('a durable function tool: operation.finished for a count_primes_durable task arrives signed, with its result inline, and operation.progress for its chunks', async () => {
    receiver.handle = echoingReceiver(() => new Response(null, { status: 204 }));
    const EVENTS = { extensions: { ...TASKS.extensions, 'io.modelcontextprotocol/events': {} } };
    const created = ok(await rpc('alice', 'tools/call', { name: 'count_primes_durable', arguments: { below: 1000, chunks: 3, pauseSeconds: 1 } }, EVENTS));
    const { taskId } = created;
    ok(await subscribe('alice', '/durable-finished', { operationId: taskId }));
    await vi.waitFor(() => expect(postsTo('/durable-finished').filter((p) => p.body.includes('operation.finished'))).toHaveLength(1), {
      timeout: 60_000,
      interval: 200,
    });
    const delivered = JSON.parse(postsTo('/durable-finished').find((p) => p.body.includes('operation.finished'))!.body) as { data: Record<string, unknown> };
    expect(delivered.data).toMatchObject({
      operationId: taskId,
      tool: 'count_primes_durable',
      status: 'completed',
      isError: false,
      result: { structuredContent: { below: 1000, primes: 168, largest: 997 } },
    });
    // A poll reads a few seconds behind now (writes still landing): it waits for the chunks' reports.
    await vi.waitFor(
      async () => {
        const { name, input, initialCursor } = created.eventSource;
        const progress = ok(await rpc('alice', 'events/poll', { name, arguments: input, cursor: initialCursor }));
        expect(progress.events.map((e: { data: { progress?: number } }) => e.data.progress)).toEqual(expect.arrayContaining([1, 2, 3]));
      },
      { timeout: 15_000, interval: 500 },
    );
  });

  it('a receiver answering 503 first gets the event again, signed afresh under the same webhook-id', async () => {
    let events = 0;
    receiver.handle = echoingReceiver(() => new Response(null, { status: ++events === 1 ? 503 : 204 }));
    const taskId = await startAnalysis('alice', 12);
    ok(await subscribe('alice', '/flaky', { operationId: taskId }));
    await vi.waitFor(() => expect(postsTo('/flaky').filter((p) => p.status === 204)).toHaveLength(1), { timeout: 60_000, interval: 200 });
    const [first, second] = postsTo('/flaky').filter((p) => !p.body.includes('"verification"'));
    expect(first?.status).toBe(503);
    expect(second?.status).toBe(204);
    expect(second?.headers.get('webhook-id')).toBe(first?.headers.get('webhook-id'));
    expect(second?.body).toBe(first?.body);
    expect(second?.headers.get('webhook-signature')).not.toBe(first?.headers.get('webhook-signature'));
  });

  it('a secret rotation: during the grace window each delivery verifies under the old and the new secret; the refresh shows deliveryStatus', async () => {
    receiver.handle = echoingReceiver(() => new Response(null, { status: 204 }));
    const taskId = await startAnalysis('alice', 13);
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const params = (secret: string) => ({
      name: 'operation.finished',
      arguments: { operationId: taskId },
      delivery: { mode: 'webhook', url: `${receiver.origin}/rotating`, secret },
      cursor: null,
    });
    const first = ok(await rpc('alice', 'events/subscribe', params(oldSecret)));
    const refreshed = ok(await rpc('alice', 'events/subscribe', params(newSecret)));
    expect(refreshed.id).toBe(first.id);
    expect(refreshed.deliveryStatus).toEqual({ active: true, lastDeliveryAt: null, lastError: null });
    await vi.waitFor(() => expect(postsTo('/rotating').filter((p) => p.headers.get('webhook-id')?.startsWith('evt_'))).toHaveLength(1), {
      timeout: 60_000,
      interval: 200,
    });
    const delivery = postsTo('/rotating').find((p) => p.headers.get('webhook-id')?.startsWith('evt_'));
    expect(delivery && verifies(delivery, newSecret)).toBe(true);
    expect(delivery && verifies(delivery, oldSecret)).toBe(true);
    expect(delivery && verifies(delivery, generateWebhookSecret())).toBe(false);
    // One verification only: the refresh of a live subscription needs none.
    expect(postsTo('/rotating').filter((p) => p.body.includes('"verification"'))).toHaveLength(1);
  });

  it('a subscription that is not refreshed stops: after refreshBefore, events go only to the live one', async () => {
    receiver.handle = echoingReceiver(() => new Response(null, { status: 204 }));
    const short = ok(await subscribe('alice', '/lapsing', { tool: 'summarize_numbers' }, { ttlMs: 1000 }));
    const long = ok(await subscribe('alice', '/lapsing', {}));
    // Waiting for the grant to pass, not timing the server: refreshBefore is its own answer.
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(Date.parse(short.refreshBefore) + 100), { timeout: 10_000, interval: 100 });
    const created = ok(await rpc('alice', 'tools/call', { name: 'summarize_numbers', arguments: { numbers: [1, 2] } }, TASKS));
    const mine = (p: { body: string }) => p.body.includes(created.taskId);
    await vi.waitFor(() => expect(postsTo('/lapsing').filter(mine).length).toBeGreaterThan(0), { timeout: 60_000, interval: 200 });
    await stack.app.webhookQueue?.drain();
    const deliveries = postsTo('/lapsing').filter(mine);
    expect(deliveries.map((p) => p.headers.get('x-mcp-subscription-id'))).toEqual([long.id]);
    // An unsubscribe of the lapsed one finds nothing; of the live one, it ends it.
    expect(
      rpcError(
        await rpc('alice', 'events/unsubscribe', {
          name: 'operation.finished',
          arguments: { tool: 'summarize_numbers' },
          delivery: { url: `${receiver.origin}/lapsing` },
        }),
      ),
    ).toMatchObject({ code: -32023, data: { kind: 'subscription' } });
    ok(await rpc('alice', 'events/unsubscribe', { name: 'operation.finished', arguments: {}, delivery: { url: `${receiver.origin}/lapsing` } }));
  });

  it('a callback that does not echo the challenge is refused with CallbackEndpointError naming the URL, and no subscription is made', async () => {
    receiver.handle = async () => Response.json({ challenge: 'not-the-nonce' });
    const error = rpcError(await subscribe('alice', '/deaf', {}));
    expect(error).toMatchObject({ code: -32027, data: { reason: 'challenge_failed', url: `${receiver.origin}/deaf` } });
    expect(error.message).toContain(`${receiver.origin}/deaf`);
    expect(error.message).not.toContain('not-the-nonce');
    receiver.handle = async () => new Response('nope', { status: 500 });
    expect(rpcError(await subscribe('alice', '/broken', {})).data).toMatchObject({ reason: 'http_5xx' });
    expect(
      rpcError(await rpc('alice', 'events/unsubscribe', { name: 'operation.finished', arguments: {}, delivery: { url: `${receiver.origin}/deaf` } })).code,
    ).toBe(-32023);
  });

  it('bad subscribe requests: a secret that is not whsec_ base64 of 24-64 bytes, a non-loopback callback, a delivery mode other than webhook', async () => {
    const base = { name: 'operation.finished', arguments: {}, cursor: null };
    const weak = rpcError(
      await rpc('alice', 'events/subscribe', { ...base, delivery: { mode: 'webhook', url: `${receiver.origin}/x`, secret: 'whsec_c2hvcnQ=' } }),
    );
    expect(weak).toMatchObject({ code: -32602, data: { field: 'params.delivery.secret' } });
    expect(weak.message).not.toContain('c2hvcnQ');
    const outside = rpcError(
      await rpc('alice', 'events/subscribe', { ...base, delivery: { mode: 'webhook', url: 'https://example.com/hook', secret: generateWebhookSecret() } }),
    );
    expect(outside).toMatchObject({ code: -32602, data: { field: 'params.delivery.url' } });
    expect(
      rpcError(await rpc('alice', 'events/subscribe', { ...base, delivery: { mode: 'push', url: `${receiver.origin}/x`, secret: generateWebhookSecret() } })),
    ).toMatchObject({ code: -32026 });
    // None of them reached the receiver.
    expect(postsTo('/x')).toEqual([]);
  });

  it("isolation: bob's subscription never receives alice's events; an unsubscribe names only the caller's own", async () => {
    receiver.handle = echoingReceiver(() => new Response(null, { status: 204 }));
    const bobs = ok(await subscribe('bob', '/bob', {}));
    const hers = await startAnalysis('alice', 14, 0);
    const his = await startAnalysis('bob', 15, 0);
    await vi.waitFor(() => expect(postsTo('/bob').some((p) => p.body.includes(his))).toBe(true), { timeout: 60_000, interval: 200 });
    await vi.waitFor(async () => expect(ok(await rpc('alice', 'tasks/get', { taskId: hers }, TASKS)).status).toBe('completed'), {
      timeout: 60_000,
      interval: 200,
    });
    await stack.app.webhookQueue?.drain();
    expect(postsTo('/bob').some((p) => p.body.includes(hers))).toBe(false);
    expect(postsTo('/bob').every((p) => p.headers.get('x-mcp-subscription-id') === bobs.id)).toBe(true);
    // Alice naming bob's exact subscription key finds nothing: the principal is part of the key.
    expect(
      rpcError(await rpc('alice', 'events/unsubscribe', { name: 'operation.finished', arguments: {}, delivery: { url: `${receiver.origin}/bob` } })).code,
    ).toBe(-32023);
    ok(await rpc('bob', 'events/unsubscribe', { name: 'operation.finished', arguments: {}, delivery: { url: `${receiver.origin}/bob` } }));
  });
});
