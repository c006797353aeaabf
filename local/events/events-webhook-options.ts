/**
 * The events-webhook settings of `npm start`: `--events-webhook URL` (loopback only) and its
 * secret, from `--events-webhook-secret`, else `ASYNC_MCP_EVENTS_WEBHOOK_SECRET`, else a new one
 * for this run. Checked before anything starts; a bad value throws {@link WebhookConfigError}.
 */
import { checkWebhookSecret, generateWebhookSecret, parseLoopbackWebhookUrl, WebhookConfigError } from './webhook-delivery.ts';

/** The variable a fixed secret may come from, so it stays out of the shell history. */
export const EVENTS_WEBHOOK_SECRET_ENV = 'ASYNC_MCP_EVENTS_WEBHOOK_SECRET';

export interface EventsWebhookFlags {
  'events-webhook'?: string | undefined;
  'events-webhook-secret'?: string | undefined;
}

export interface EventsWebhookSettings {
  url: URL;
  secret: string;
  /** Whether the secret was made for this run (and so must be shown once). */
  generated: boolean;
}

/** The webhook to post to, or `undefined` when `--events-webhook` is not given. */
export function eventsWebhookFrom(flags: EventsWebhookFlags, env: Record<string, string | undefined>): EventsWebhookSettings | undefined {
  const raw = flags['events-webhook'];
  if (raw === undefined) {
    if (flags['events-webhook-secret'] !== undefined) throw new WebhookConfigError('--events-webhook-secret needs --events-webhook URL');
    return undefined;
  }
  const url = parseLoopbackWebhookUrl(raw);
  const given = flags['events-webhook-secret'] ?? (env[EVENTS_WEBHOOK_SECRET_ENV] || undefined);
  if (given === undefined) return { url, secret: generateWebhookSecret(), generated: true };
  const source = flags['events-webhook-secret'] !== undefined ? '--events-webhook-secret' : EVENTS_WEBHOOK_SECRET_ENV;
  return { url, secret: checkWebhookSecret(given, source), generated: false };
}
