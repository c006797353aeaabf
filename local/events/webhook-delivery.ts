/**
 * `npm start -- --events-webhook URL`: each operation event, POSTed as JSON to a loopback URL
 * and signed as the Standard Webhooks spec says (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
 * base64 part of a `whsec_` secret). Only loopback URLs are taken, and redirects are not
 * followed, so the local server never calls out to the network; in AWS the same events reach
 * webhooks through an EventBridge API destination instead (docs/events.md). Deliveries run
 * one after another, in order, off the status-sync path, each retried a few times with backoff.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** The hosts a webhook URL may name. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const SECRET_PREFIX = 'whsec_';

/** A webhook URL or secret that cannot be used; startup stops with its message. */
export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookConfigError';
  }
}

/** The URL, if it is http(s) on a loopback host; otherwise a {@link WebhookConfigError} saying why. */
export function parseLoopbackWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookConfigError(`--events-webhook: "${raw}" is not a URL (expected e.g. http://127.0.0.1:8080/events)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookConfigError(`--events-webhook: ${url.protocol} is not http or https`);
  if (!LOOPBACK_HOSTS.has(url.hostname)) {
    throw new WebhookConfigError(
      `--events-webhook: ${url.hostname} is not a loopback host; the local server posts only to 127.0.0.1, ::1 or localhost (in AWS, use an EventBridge API destination: docs/events.md)`,
    );
  }
  if (url.username || url.password)
    throw new WebhookConfigError('--events-webhook: the URL must not carry credentials; the signature authenticates each delivery');
  return url;
}

/** A fresh `whsec_` secret: 32 random bytes, base64. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The secret, if it is `whsec_` and base64 of 24 to 64 bytes; otherwise a {@link WebhookConfigError}. */
export function checkWebhookSecret(secret: string, source: string): string {
  const key = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : undefined;
  const bytes = key !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64').length : 0;
  if (bytes < 24 || bytes > 64) throw new WebhookConfigError(`${source}: expected whsec_ followed by the base64 of 24 to 64 random bytes`);
  return secret;
}

/** `v1,<signature>` of one delivery, as Standard Webhooks defines it. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface WebhookDeliveryOptions {
  url: URL;
  secret: string;
  /** Attempts per event, the first included. @default 4 */
  maxAttempts?: number;
  /** The wait before the second attempt, doubled for each one after. @default 500 */
  backoffMs?: number;
  /** How long one attempt may take. @default 10000 */
  attemptTimeoutMs?: number;
  /** Where failed deliveries are reported (never the body). @default console */
  logger?: Pick<Console, 'warn'>;
}

export interface WebhookDelivery {
  /** Queues one event; returns at once. `id` is its `webhook-id`, the same on every attempt. */
  deliver(id: string, event: unknown): void;
  /** Resolves when every queued event was delivered or given up on. */
  drain(): Promise<void>;
  /** Stops taking events and waits for the queued ones. */
  close(): Promise<void>;
}

export function createWebhookDelivery(options: WebhookDeliveryOptions): WebhookDelivery {
  const maxAttempts = options.maxAttempts ?? 4;
  const backoffMs = options.backoffMs ?? 500;
  const timeoutMs = options.attemptTimeoutMs ?? 10_000;
  const logger = options.logger ?? console;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  async function post(id: string, body: string): Promise<void> {
    let failure = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 2)));
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhook(options.secret, id, timestamp, body),
          },
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.body?.cancel();
        if (response.status >= 200 && response.status < 300) return;
        failure = `HTTP ${response.status}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
    }
    logger.warn(`events webhook: gave up on event ${id} after ${maxAttempts} attempts (${failure})`);
  }

  return {
    deliver(id, event) {
      if (closed) return;
      const body = JSON.stringify(event);
      queue = queue.then(() => post(id, body));
    },
    drain: () => queue,
    async close() {
      closed = true;
      await queue;
    },
  };
}
