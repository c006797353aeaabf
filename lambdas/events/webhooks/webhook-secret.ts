/**
 * Standard Webhooks symmetric secrets, as SEP-3415 requires them of `delivery.secret`:
 * "the literal prefix `whsec_` followed by the base64 encoding of 24 to 64 random bytes.
 * Servers MUST reject other values with `InvalidParams`."
 */
import { randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
/** The SEP's bounds on the decoded key. */
export const WEBHOOK_SECRET_MIN_BYTES = 24;
export const WEBHOOK_SECRET_MAX_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A secret that passed {@link parseWebhookSecret}: its text as the client sent it, and the HMAC key it names. */
export interface WebhookSecret {
  readonly text: string;
  readonly key: Buffer;
}

/** Why a value is not a secret; never quotes the value, which may be a real secret mistyped. */
export type WebhookSecretCheck = { readonly ok: true; readonly secret: WebhookSecret } | { readonly ok: false; readonly reason: string };

/** Checks a client's `delivery.secret`; the reason names the problem, ready to follow the field's name. */
export function parseWebhookSecret(value: unknown): WebhookSecretCheck {
  if (typeof value !== 'string') return { ok: false, reason: 'must be a string: whsec_ followed by the base64 of 24 to 64 random bytes' };
  if (!value.startsWith(PREFIX)) return { ok: false, reason: 'must start with whsec_ (a Standard Webhooks secret)' };
  const encoded = value.slice(PREFIX.length);
  if (!BASE64.test(encoded)) return { ok: false, reason: 'must be whsec_ followed by standard base64 (A-Z, a-z, 0-9, +, /, = padding)' };
  const key = Buffer.from(encoded, 'base64');
  // Buffer's decoder skips what it cannot use; a value that does not re-encode to itself is not base64.
  if (key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return { ok: false, reason: 'is not valid base64 after whsec_' };
  if (key.length < WEBHOOK_SECRET_MIN_BYTES || key.length > WEBHOOK_SECRET_MAX_BYTES) {
    return { ok: false, reason: `must encode ${WEBHOOK_SECRET_MIN_BYTES} to ${WEBHOOK_SECRET_MAX_BYTES} bytes after whsec_ (it encodes ${key.length})` };
  }
  return { ok: true, secret: { text: value, key } };
}

/** A fresh secret from the CSPRNG, for tests and development; clients bring their own in production. */
export function generateWebhookSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < WEBHOOK_SECRET_MIN_BYTES || bytes > WEBHOOK_SECRET_MAX_BYTES) {
    throw new RangeError(`a webhook secret has ${WEBHOOK_SECRET_MIN_BYTES} to ${WEBHOOK_SECRET_MAX_BYTES} bytes, not ${bytes}`);
  }
  return `${PREFIX}${randomBytes(bytes).toString('base64')}`;
}
