/**
 * Reads the Lambda environment the CDK construct sets (ENV in operations-table.ts).
 * Called once at module init; a missing or malformed variable fails the cold start
 * with a message naming it.
 */
import { ENV } from '../aws/operations-table.ts';
import { DEFAULT_LIMITS, type OperationsLimits } from '../operations/operations-service.ts';
import type { CallbackMode } from '../events/webhooks/callback-url-guard.ts';
import { EVENTS_DEFAULTS, MAX_SUBSCRIPTION_TTL_CEILING_SECONDS, type EventsSettingsInput } from '../events/events-settings.ts';

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is required`);
  return value;
}

export function limitsFromEnv(): OperationsLimits {
  return {
    maxKeepAliveSeconds: positiveInt(ENV.maxKeepAliveSeconds, DEFAULT_LIMITS.maxKeepAliveSeconds),
    allowUnlimitedKeepAlive: process.env[ENV.allowUnlimitedKeepAlive] === 'true',
    maxBlockingSeconds: positiveInt(ENV.maxBlockingSeconds, DEFAULT_LIMITS.maxBlockingSeconds),
    reconcileAfterSeconds: DEFAULT_LIMITS.reconcileAfterSeconds,
    maxActiveOperations: positiveInt(ENV.maxActiveOperations, DEFAULT_LIMITS.maxActiveOperations),
  };
}

/** Whether handle tools are on: unset, "", "1" or "true" leaves them on; "0" or "false" turns them off. */
export function handleToolsFromEnv(): boolean {
  const raw = process.env[ENV.handleTools];
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`Environment variable ${ENV.handleTools} must be 1 or 0`);
}

/** Whether `subscriptions/listen` serves task notifications: unset, "", "1" or "true" leaves it on; "0" or "false" turns it off. */
export function listenFromEnv(): boolean {
  const raw = process.env[ENV.listen];
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`Environment variable ${ENV.listen} must be 1 or 0`);
}

/**
 * The Events extension's settings: `ASYNC_MCP_EVENTS` (unset, "", "1" or "true" on; "0" or
 * "false" off), the log's retention in hours and the longest subscription TTL in seconds
 * (at most a day).
 */
export function eventsFromEnv(): EventsSettingsInput & { enabled: boolean } {
  const raw = process.env[ENV.events];
  let enabled: boolean;
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') enabled = true;
  else if (raw === '0' || raw === 'false') enabled = false;
  else throw new Error(`Environment variable ${ENV.events} must be 1 or 0`);
  const maxSubscriptionTtlSeconds = positiveInt(ENV.eventsMaxSubscriptionTtlSeconds, EVENTS_DEFAULTS.maxSubscriptionTtlSeconds);
  if (maxSubscriptionTtlSeconds > MAX_SUBSCRIPTION_TTL_CEILING_SECONDS) {
    throw new Error(`Environment variable ${ENV.eventsMaxSubscriptionTtlSeconds} must be at most ${MAX_SUBSCRIPTION_TTL_CEILING_SECONDS}`);
  }
  return {
    enabled,
    retentionHours: positiveInt(ENV.eventsRetentionHours, EVENTS_DEFAULTS.retentionHours),
    maxSubscriptionTtlSeconds,
    minSubscriptionTtlSeconds: Math.min(EVENTS_DEFAULTS.minSubscriptionTtlSeconds, maxSubscriptionTtlSeconds),
  };
}

/** The queue webhook delivery jobs go to; without one, webhook subscriptions are not offered. */
export function eventsDeliveryQueueUrlFromEnv(): string | undefined {
  return process.env[ENV.eventsDeliveryQueueUrl] || undefined;
}

/**
 * Which callbacks webhooks may use: "1" is local mode (loopback http only, every other host
 * refused, as in `npm start`), for the local as-deployed runner; unset, "" or "0" is AWS mode
 * (public https only).
 */
export function eventsCallbackModeFromEnv(): CallbackMode {
  const raw = process.env[ENV.eventsLoopbackCallbacks];
  if (raw === undefined || raw === '' || raw === '0') return 'aws';
  if (raw === '1') return 'local';
  throw new Error(`Environment variable ${ENV.eventsLoopbackCallbacks} must be 1 or 0`);
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`Environment variable ${name} must be a positive integer`);
  return value;
}
