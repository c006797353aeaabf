/**
 * The contract between the Events extension's webhook logic and the transport that carries
 * its work off the request path: an SQS queue and a delivery function in AWS, an in-process
 * queue with timers locally. One job is one event for one subscription, retried on its own.
 */
import type { TraceCarrier } from '../observability/trace-context.ts';

/** One event occurrence to deliver to one webhook subscription. Small: no body, no secret. */
export interface WebhookDeliveryJob {
  /** The subscription's derived id (the SEP's `id`), unique within its owner. */
  readonly subscriptionId: string;
  /** The owning principal's storage key, as the subscription and event log items are keyed. */
  readonly ownerKey: string;
  /** The occurrence's stable `eventId`; `undefined` for a control body (verification, terminated). */
  readonly eventId?: string;
  /**
   * For a job that ends a subscription: the events it was owed when the end was handed over
   * (owed-events.ts), in log order; the end sends those still not settled before `terminated`.
   */
  readonly owed?: readonly string[];
  /** The occurrence's W3C context (its append span, in its operation's trace): each try is a span under it, and sends it on. */
  readonly trace?: TraceCarrier;
  /** 1 for the first try; the transport increments it on each retry. */
  readonly attempt: number;
}

/** What one try of a job came to, which tells the transport what to do next. */
export type WebhookDeliveryOutcome =
  /** A 2xx answer: done. */
  | { readonly kind: 'delivered' }
  /** Nothing to deliver any more (subscription gone, expired, suspended, event past retention): done. */
  | { readonly kind: 'dropped'; readonly reason: string }
  /** A non-2xx answer or a timeout: try again after the given delay. */
  | { readonly kind: 'retry'; readonly afterSeconds: number; readonly reason: string };

/** Where jobs go when an occurrence is appended to the log: the queue port. */
export interface WebhookDeliveryQueue {
  enqueue(jobs: readonly WebhookDeliveryJob[]): Promise<void>;
}

/** Runs one try of one job; the transport calls it and acts on the outcome. */
export type DeliverWebhookJob = (job: WebhookDeliveryJob) => Promise<WebhookDeliveryOutcome>;
