/**
 * The Lambda environment: the variables the CDK construct sets (ENV), and their readers.
 * The readers are called once at module init; a missing or malformed variable fails the cold start
 * with a message naming it.
 */
import { DEFAULT_LIMITS, type OperationsLimits } from '../operations/operations-limits.ts';
import type { CallbackMode } from '../events/webhooks/callback-url-guard.ts';
import { EVENTS_DEFAULTS, MAX_SUBSCRIPTION_TTL_CEILING_SECONDS, type EventsSettingsInput } from '../events/events-settings.ts';

/** Environment variables the Lambda functions read; the CDK construct sets them. */
export const ENV = {
  tableName: 'OPERATIONS_TABLE_NAME',
  /** Directory of the bundled tool folders (tool.json + definition.asl.json). */
  toolsDir: 'TOOLS_DIR',
  /** Server-wide bound on keepAlive, seconds. */
  maxKeepAliveSeconds: 'MAX_KEEPALIVE_SECONDS',
  /** "true" lets clients ask for an unlimited keepAlive. */
  allowUnlimitedKeepAlive: 'ALLOW_UNLIMITED_KEEPALIVE',
  /** Bound for blocking calls (synchronous runs, 2025-11-25 tasks/result), seconds; fits the Lambda timeout. */
  maxBlockingSeconds: 'MAX_BLOCKING_SECONDS',
  /** Active (not yet terminal) operations one principal may have at once; default 100. */
  maxActiveOperations: 'ASYNC_MCP_MAX_ACTIVE_OPERATIONS',
  /** "0" turns off handle tools for clients without async support; on when unset (see handleToolsFromEnv). */
  handleTools: 'ASYNC_MCP_HANDLE_TOOLS',
  /** "0" turns off `subscriptions/listen` (task status notifications); on when unset. */
  listen: 'ASYNC_MCP_LISTEN',
  /** The results bucket: tool results too large for a record live there. */
  resultsBucket: 'RESULTS_BUCKET_NAME',
  /** The Secrets Manager secret holding the server's key for state handed to clients (`requestState`). */
  secretArn: 'ASYNC_MCP_SECRET_ARN',
  /** The EventBridge bus status sync puts `Operation Status Changed` events on (name or ARN); none when unset. */
  eventBusName: 'ASYNC_MCP_EVENT_BUS_NAME',
  /** "0" turns off the MCP Events extension (`events/*`); on when unset. */
  events: 'ASYNC_MCP_EVENTS',
  /** How long the per-principal event log keeps an occurrence, hours; default 24. */
  eventsRetentionHours: 'ASYNC_MCP_EVENTS_RETENTION_HOURS',
  /** The longest webhook subscription TTL the server grants, seconds; default 3600, at most 86400. */
  eventsMaxSubscriptionTtlSeconds: 'ASYNC_MCP_EVENTS_MAX_TTL_SECONDS',
  /** The SQS queue webhook delivery jobs go to; without it, subscriptions are refused as unsupported. */
  eventsDeliveryQueueUrl: 'ASYNC_MCP_EVENTS_DELIVERY_QUEUE_URL',
  /** "1" allows loopback http callbacks (local mode); only the local as-deployed runner sets it, never the CDK template. */
  eventsLoopbackCallbacks: 'ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS',
} as const;

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
