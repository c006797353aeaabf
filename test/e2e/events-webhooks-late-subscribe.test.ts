/**
 * Subscribing by webhook after a task has ended, on `npm start -- --oauth-dev` over real HTTP,
 * the way ChatGPT's documented flow does it: the task ends, then the host subscribes to
 * `operation.finished` for that operation with `cursor: null`. The answer's cursor lies before
 * the end, so the end must arrive by webhook too; and a progress subscription made after the
 * end gets its `terminated` at once. Every callback is on 127.0.0.1.
 */
import { auth } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateWebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { MemoryOAuthProvider, signInWithFetch } from '../support/oauth-dev-client.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStackWithDevAuthorization;
let receiver: WebhookReceiver;
let token = '';

beforeAll(async () => {
  stack = await startLocalStackWithDevAuthorization(
    // Reads stay 10 s behind now here, so "just after the end" holds on a slow machine too.
    { toolsDir: 'state-machines', port: 0, waitTimeScale: 0.01, events: { settleMs: 10_000, delivery: { baseDelaySeconds: 1 } } },
    { announce: () => undefined },
  );
  receiver = await startWebhookReceiver();
  receiver.handle = async (request) => {
    const body = (await request.json()) as Record<string, unknown>;
    return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status: 204 });
  };
  const provider = new MemoryOAuthProvider('events late subscribe');
  expect(await auth(provider, { serverUrl: stack.url, scope: DEV_MCP_SCOPE })).toBe('REDIRECT');
  const pages = await signInWithFetch(provider.authorizationUrls[0] as URL, 'alice');
  expect(
    await auth(provider, { serverUrl: stack.url, authorizationCode: pages.callback.get('code') as string, iss: pages.callback.get('iss') as string }),
  ).toBe('AUTHORIZED');
  token = (provider.savedTokens as { access_token: string }).access_token;
});
afterAll(async () => {
  await stack?.drainEvents();
  await stack?.close();
  await receiver?.close();
});

const rpc = (method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) =>
  modernRequest(stack.url, method, params, { headers: { authorization: `Bearer ${token}` }, capabilities });
const bodiesTo = (path: string) =>
  receiver.posts.filter((p) => p.path === path && !p.body.includes('"verification"')).map((p) => JSON.parse(p.body) as Record<string, unknown>);

/** A short analyze_dataset task, run to its end. */
async function endedTask(seed: number): Promise<string> {
  const { taskId } = ok(await rpc('tools/call', { name: 'analyze_dataset', arguments: { rows: 100, seed, delaySeconds: 1 } }, TASKS));
  await pollUntilStatus(() => rpc('tasks/get', { taskId }, TASKS), ['completed'], { timeout: 60_000 });
  return taskId;
}

describe('a webhook subscribed after the task ended', () => {
  it('a webhook subscribed to operation.finished with cursor null just after the end still fires with that end', async () => {
    const taskId = await endedTask(21);
    const subscribed = ok(
      await rpc('events/subscribe', {
        name: 'operation.finished',
        arguments: { operationId: taskId },
        delivery: { mode: 'webhook', url: `${receiver.origin}/late`, secret: generateWebhookSecret() },
        cursor: null,
      }),
    );
    // The webhook fires with the end (before the fix, nothing ever came).
    await vi.waitFor(() => expect(bodiesTo('/late')).toHaveLength(1), { timeout: 30_000, interval: 100 });
    // The answer's cursor lies before the end: a poll from it returns the same end, once it is past the settle window.
    const end = await vi.waitFor(
      async () => {
        const polled = ok(await rpc('events/poll', { name: 'operation.finished', arguments: { operationId: taskId }, cursor: subscribed.cursor }));
        expect(polled.events).toHaveLength(1);
        return polled.events[0] as { eventId: string };
      },
      { timeout: 30_000, interval: 500 },
    );
    expect(bodiesTo('/late')[0]).toMatchObject({ eventId: end?.eventId, name: 'operation.finished', data: { operationId: taskId, status: 'completed' } });
  });

  it('a progress subscription made after its operation ended gets its terminated at once', async () => {
    const taskId = await endedTask(22);
    ok(
      await rpc('events/subscribe', {
        name: 'operation.progress',
        arguments: { operationId: taskId },
        delivery: { mode: 'webhook', url: `${receiver.origin}/late-progress`, secret: generateWebhookSecret() },
        cursor: null,
      }),
    );
    await vi.waitFor(() => expect(bodiesTo('/late-progress').filter((b) => b.type === 'terminated')).toHaveLength(1), { timeout: 30_000, interval: 100 });
    expect(bodiesTo('/late-progress').at(-1)).toMatchObject({ type: 'terminated', error: { code: -32023, data: { reason: 'operation_ended' } } });
  });
});
