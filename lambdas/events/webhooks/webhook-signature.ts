/**
 * Standard Webhooks signing, as SEP-3415's "Signature scheme" profiles it: `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated list of
 * `v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`, one per active secret so
 * that deliveries verify under the old and the new secret during a rotation's grace window.
 */
import { createHash, createHmac } from 'node:crypto';
import type { WebhookSecret } from './webhook-secret.ts';

/** The three Standard Webhooks headers of one signed body. */
export interface WebhookSignatureHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

export interface SignWebhookInput {
  /** The event's `eventId`, or a control envelope's {@link controlMessageId}. */
  readonly id: string;
  /** The exact bytes that will be sent; the HMAC covers them, never a re-serialization. */
  readonly body: string;
  /** Each secret that should verify it, newest first; at least one. */
  readonly secrets: readonly WebhookSecret[];
  /** "Each retry attempt MUST regenerate the timestamp and signature." @default now */
  readonly now?: Date;
}

/** The headers that sign `body` under every given secret. */
export function signWebhook({ id, body, secrets, now = new Date() }: SignWebhookInput): WebhookSignatureHeaders {
  if (secrets.length === 0) throw new RangeError('a webhook is signed with at least one secret');
  // The id travels in a header: printable ASCII, no spaces or line breaks.
  if (!/^[\x21-\x7e]+$/.test(id)) throw new RangeError('a webhook-id is printable ASCII without spaces');
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), Buffer.from(body, 'utf8')]);
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secret.key).update(signed).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

/** The control envelopes SEP-3415 defines beside event bodies. */
export type WebhookControlType = 'verification' | 'gap' | 'terminated';

/**
 * "`webhook-id` for a control envelope is a per-message identifier of the form `msg_<type>_<random>`":
 * the random part is a hash of what names the message (`message`), so every try of one envelope
 * carries the same id and a receiver that dedupes on it processes the envelope once.
 */
export function controlMessageId(type: WebhookControlType, message: string): string {
  return `msg_${type}_${createHash('sha256').update(`${type}\n${message}`).digest('hex').slice(0, 32)}`;
}
