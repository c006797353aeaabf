/**
 * What the MCP edge's Events methods run on, built once per process by the app: the
 * settings, the log, the webhook subscriptions (absent where webhook delivery is not
 * configured), the per-principal cap on push streams, and the local wake-up signal.
 */
import type { EventLog } from '../../events/event-log.ts';
import type { WebhookSubscriptions } from '../../events/webhook-subscriptions.ts';
import type { CallbackMode } from '../../events/webhooks/callback-url-guard.ts';
import type { ReadSettings } from '../../events/event-reader.ts';
import { retentionMsOf, type EventsSettings } from '../../events/events-settings.ts';
import type { ListenLeases } from '../../operations/listen-leases.ts';
import type { StatusSignal } from '../../operations/status-signal.ts';
import { OperationError } from '../../operations/operation-error.ts';
import { EventsError } from '../../events/events-error.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { MAX_TOKEN_LENGTH } from '../dialects/dialect-support.ts';
import type { OperationRecord } from '../../operations/operation.ts';
import type { DeliveryMode } from './event-catalog.ts';

export interface EventsRuntime {
  readonly settings: EventsSettings;
  readonly log: EventLog;
  /** Webhook subscriptions and the callbacks they may name; without them `events/subscribe` is Unsupported and `webhook` is not listed. */
  readonly webhooks?: { readonly subscriptions: WebhookSubscriptions; readonly callbackMode: CallbackMode };
  /** The per-principal cap on open `events/stream` requests. */
  readonly streams: ListenLeases;
  /** Wakes push streams when a status is written in this process (the local stack). */
  readonly wake?: StatusSignal;
  /** Epoch ms. */
  readonly now: () => number;
}

/** Who is asking: the owner of the records, and whether a real identity stands behind it. */
export interface EventsCaller {
  readonly ownerId: string;
  /** An OAuth subject or an IAM identity; `false` for `auth: none` and the unauthenticated local principal. */
  readonly authenticated: boolean;
}

/** The delivery modes this deployment offers for every event type. */
export function deliveryModes(runtime: EventsRuntime): DeliveryMode[] {
  return runtime.webhooks ? ['poll', 'push', 'webhook'] : ['poll', 'push'];
}

export function readSettingsOf(runtime: EventsRuntime): ReadSettings {
  return { retentionMs: retentionMsOf(runtime.settings), settleMs: runtime.settings.settleMs };
}

/**
 * Checks that `operationId` names one of the caller's operations. "An operationId that is not
 * the caller's: NotFound, exactly as for an unknown id": expired, unknown and another
 * principal's all read the same.
 */
export async function checkOwnOperation(deps: McpDeps, ownerId: string, operationId: string): Promise<OperationRecord> {
  const missing = (cause?: unknown) => new EventsError('NOT_FOUND', 'Operation not found', { kind: 'operation' }, cause === undefined ? undefined : { cause });
  if (operationId.length > MAX_TOKEN_LENGTH) throw missing();
  try {
    // A plain read: watching an operation never reconciles it.
    return await deps.operations.readLive({ ownerId, token: operationId });
  } catch (error) {
    if (error instanceof OperationError && (error.code === 'NOT_FOUND' || error.code === 'EXPIRED')) {
      throw missing(error);
    }
    throw error;
  }
}

/**
 * Whether a principal is an authenticated identity: an OAuth subject or an IAM identity
 * (principals.ts names each kind). The open URL's shared principal and the local stack's
 * unauthenticated ones are not: "Unauthenticated MCP servers may offer poll and push, but not webhook."
 */
export function isAuthenticatedPrincipal(principal: string): boolean {
  return principal.startsWith('oauth:') || principal.startsWith('iam:');
}

/** Which principals' push streams a lease counts: never the listen streams' (listen-leases.ts prefixes its own). */
export function streamLeaseOwner(ownerId: string): string {
  return `events.${ownerId}`;
}
