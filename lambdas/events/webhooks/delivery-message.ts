/**
 * A webhook delivery job as a queue message: the job's ids as JSON, and nothing more (no event
 * body, no secret). The attempt is not in the body: the queue counts receives, and a retried
 * message is the same message made visible again.
 */
import { parseTraceCarrier, type TraceCarrier } from '../../observability/trace-context.ts';
import { MAX_OWED } from '../owed-events.ts';
import type { WebhookDeliveryJob } from '../webhook-delivery-job.ts';

/**
 * Strict: a message that is not one of ours is not delivered. Checked by hand, not with zod:
 * status sync enqueues jobs, and its bundle carries no schema library.
 */
const FIELD_LENGTHS = { subscriptionId: 200, ownerKey: 1024, eventId: 512 } as const;
type Field = keyof typeof FIELD_LENGTHS;

function isDeliveryMessage(json: unknown): json is { subscriptionId: string; ownerKey: string; eventId?: string; owed?: string[]; trace?: TraceCarrier } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const entries = Object.entries(json);
  const isId = (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= FIELD_LENGTHS.eventId;
  const fieldOk = ([name, value]: [string, unknown]) =>
    name === 'owed'
      ? Array.isArray(value) && value.length <= MAX_OWED && value.every(isId)
      : name === 'trace'
        ? parseTraceCarrier(value) !== undefined
        : Object.hasOwn(FIELD_LENGTHS, name) && typeof value === 'string' && value.length >= 1 && value.length <= FIELD_LENGTHS[name as Field];
  return entries.every(fieldOk) && 'subscriptionId' in json && 'ownerKey' in json;
}

/** A job's message body. */
export function deliveryMessageOf(job: WebhookDeliveryJob): string {
  return JSON.stringify({
    subscriptionId: job.subscriptionId,
    ownerKey: job.ownerKey,
    ...(job.eventId === undefined ? {} : { eventId: job.eventId }),
    ...(job.owed === undefined ? {} : { owed: job.owed }),
    ...(job.trace === undefined ? {} : { trace: job.trace }),
  });
}

/** The job a message carries, its attempt being the message's receive count; `undefined` for a body that is not one. */
export function parseDeliveryMessage(body: string, receiveCount: number): WebhookDeliveryJob | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isDeliveryMessage(json)) return undefined;
  const { subscriptionId, ownerKey, eventId, owed } = json;
  const trace = parseTraceCarrier(json.trace);
  return {
    subscriptionId,
    ownerKey,
    ...(eventId === undefined ? {} : { eventId }),
    ...(owed === undefined ? {} : { owed }),
    ...(trace === undefined ? {} : { trace }),
    attempt: Number.isInteger(receiveCount) && receiveCount >= 1 ? receiveCount : 1,
  };
}
