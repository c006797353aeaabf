/**
 * A webhook delivery job as a queue message: the job's ids as JSON, and nothing more (no event
 * body, no secret). The attempt is not in the body: the queue counts receives, and a retried
 * message is the same message made visible again.
 */
import * as z from 'zod';
import type { WebhookDeliveryJob } from '../webhook-delivery-job.ts';

/** Strict: a message that is not one of ours is not delivered. */
const DeliveryMessage = z.strictObject({
  subscriptionId: z.string().min(1).max(200),
  ownerKey: z.string().min(1).max(1024),
  eventId: z.string().min(1).max(512).optional(),
});

/** A job's message body. */
export function deliveryMessageOf(job: WebhookDeliveryJob): string {
  return JSON.stringify({ subscriptionId: job.subscriptionId, ownerKey: job.ownerKey, ...(job.eventId === undefined ? {} : { eventId: job.eventId }) });
}

/** The job a message carries, its attempt being the message's receive count; `undefined` for a body that is not one. */
export function parseDeliveryMessage(body: string, receiveCount: number): WebhookDeliveryJob | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = DeliveryMessage.safeParse(json);
  if (!parsed.success) return undefined;
  return { ...parsed.data, attempt: Number.isInteger(receiveCount) && receiveCount >= 1 ? receiveCount : 1 };
}
