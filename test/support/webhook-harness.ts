/**
 * Webhook subscriptions over a given store (in memory by default) and the in-memory event log,
 * with the real sender posting to a receiver on 127.0.0.1 and a queue that only collects jobs:
 * the setting the webhook unit tests share.
 */
import { vi } from 'vitest';
import { streamOf, type EventEntry } from '../../lambdas/events/event-log.ts';
import { resolveEventsSettings, type EventsSettingsInput } from '../../lambdas/events/events-settings.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { InMemoryWebhookSubscriptions } from '../../lambdas/events/in-memory-webhook-subscriptions.ts';
import { createDeliverWebhookJob } from '../../lambdas/events/webhook-delivery.ts';
import type { WebhookDeliveryJob } from '../../lambdas/events/webhook-delivery-job.ts';
import type { WebhookSubscriptionStore } from '../../lambdas/events/webhook-subscription.ts';
import { WebhookSubscriptions, type SubscribeRequest } from '../../lambdas/events/webhook-subscriptions.ts';
import { generateWebhookSecret, parseWebhookSecret, type WebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { createWebhookSender } from '../../lambdas/events/webhooks/webhook-sender.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

export const T0 = 1_760_000_000_000;
const SERVER_KEY = new Uint8Array(32).fill(9);
export const OPERATION_ENDED = { code: -32023, message: 'The operation has ended', data: { reason: 'operation_ended' } };

export function webhookSecret(): WebhookSecret {
  const parsed = parseWebhookSecret(generateWebhookSecret());
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.secret;
}

/** A receiver that echoes verification challenges and answers 204 to everything else. */
export function answerVerifications(receiver: WebhookReceiver): void {
  receiver.handle = async (request) => {
    const body = (await request.json()) as { type?: string; challenge?: string };
    return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status: 204 });
  };
}

export function webhookSetUp(options: { settings?: EventsSettingsInput; store?: WebhookSubscriptionStore } = {}) {
  const clock = { now: () => T0 };
  const jobs: WebhookDeliveryJob[] = [];
  const log = new InMemoryEventLog(clock);
  const store = options.store ?? new InMemoryWebhookSubscriptions();
  const logger = { error: vi.fn(), warn: vi.fn() };
  const subscriptions = new WebhookSubscriptions({
    store,
    log,
    send: createWebhookSender({ mode: 'local' }),
    queue: { enqueue: async (added) => void jobs.push(...added) },
    settings: resolveEventsSettings({ minSubscriptionTtlSeconds: 1, ...options.settings }),
    secretKey: async () => SERVER_KEY,
    clock,
    logger,
    operationEnded: OPERATION_ENDED,
  });
  return { clock, jobs, log, store, logger, subscriptions, deliver: createDeliverWebhookJob(subscriptions) };
}

export function subscribeRequest(receiver: WebhookReceiver, overrides: Partial<SubscribeRequest> = {}): SubscribeRequest {
  return {
    ownerId: 'owner-a',
    name: 'operation.finished',
    arguments: {},
    url: `${receiver.origin}/hook`,
    secret: webhookSecret(),
    cursor: null,
    ...overrides,
  };
}

export function eventEntry(overrides: Partial<EventEntry> = {}): EventEntry {
  const name = overrides.name ?? 'operation.finished';
  const operationId = overrides.operationId ?? 'op-1';
  return {
    ownerId: 'owner-a',
    eventId: 'evt_1',
    name,
    stream: streamOf(name, operationId),
    at: T0,
    operationId,
    tool: 'analyze_dataset',
    data: { status: 'completed' },
    expiresAt: T0 / 1000 + 3600,
    ...overrides,
    loggedAt: overrides.loggedAt ?? T0,
  };
}
