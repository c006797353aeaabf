/**
 * The Events extension's request/response methods on the 2026-07-28 wire (SEP-3415):
 * `events/list` and `events/poll` ("One DynamoDB read per poll, never a Step Functions
 * call"), and, where webhook delivery is configured, `events/subscribe` and
 * `events/unsubscribe`. `events/stream` is a long-lived stream of its own (events-stream.ts).
 * Sentences quoted below are the SEP's.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { matchesFilter } from '../../events/event-filter.ts';
import { decodeEventCursor, encodeEventCursor } from '../../events/event-cursor.ts';
import { readEvents } from '../../events/event-reader.ts';
import { EventsError } from '../../events/events-error.ts';
import { isTerminal } from '../../operations/operation.ts';
import { ANY_RESULT } from '../dialects/dialect-support.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { toProtocolError } from '../edge/json-rpc-errors.ts';
import { eventTypeNamed, listEventTypes } from './event-catalog.ts';
import { occurrenceOf } from '../../events/event-occurrence.ts';
import { checkOwnOperation, deliveryModes, readSettingsOf, type EventsCaller, type EventsRuntime } from './events-runtime.ts';
import { parseCallbackUrl } from '../../events/webhooks/callback-url-guard.ts';
import { parseWebhookSecret } from '../../events/webhooks/webhook-secret.ts';

/** The extension identifier, in capabilities. */
export const EVENTS_EXTENSION = 'io.modelcontextprotocol/events';

/** Events per poll unless the client asks for fewer; also the most one poll returns. */
export const MAX_EVENTS_PER_POLL = 100;

const SCHEMAS = { params: ANY_RESULT, result: ANY_RESULT };

/** The subscription every poll, stream and subscribe names: the event, its arguments, where to start. */
export const SubscriptionParams = z.looseObject({
  name: z.string({ message: 'is required and must be a string' }).min(1, 'must not be empty'),
  arguments: z.unknown().optional(),
  cursor: z.string({ message: 'must be a string or null' }).nullable().optional(),
  maxAgeMs: z.number({ message: 'must be a number' }).int('must be an integer').min(0, 'must not be negative').optional(),
});
const PollParams = SubscriptionParams.extend({
  maxEvents: z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1').optional(),
});
const ListParams = z.looseObject({ cursor: z.string({ message: 'must be a string' }).optional() });
const Delivery = z.looseObject(
  {
    mode: z.string({ message: 'must be a string' }).optional(),
    url: z.unknown(),
  },
  { message: 'is required and must be an object' },
);
const SubscribeParams = SubscriptionParams.extend({
  delivery: Delivery.extend({ secret: z.unknown() }),
  ttlMs: z.number({ message: 'must be a positive integer or null' }).int('must be an integer').positive('must be positive').nullable().optional(),
});
const UnsubscribeParams = z.looseObject({
  name: SubscriptionParams.shape.name,
  arguments: z.unknown().optional(),
  delivery: Delivery,
});

/**
 * "A server advertises event support in the capabilities it returns from server/discover";
 * ChatGPT's profile and the AI SDK read the top-level `events` of the design sketch, which
 * "at least one deployed client reads", so both are there.
 */
export function eventsCapabilities(): Record<string, unknown> {
  return { extensions: { [EVENTS_EXTENSION]: {} }, events: {} };
}

/** Parses wire params into `T`; the first failure is InvalidParams naming the field. */
export function parseEventParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = ['params', ...(issue?.path ?? []).map(String)].join('.');
  throw new EventsError('INVALID_PARAMS', `Invalid ${field}: ${issue?.message ?? 'is invalid'}`, { field });
}

/** The position a wire cursor holds: `null` and absent are "now" ("Absent means null"). */
export function cursorPosition(cursor: string | null | undefined): string | null {
  if (cursor === undefined || cursor === null) return null;
  const position = decodeEventCursor(cursor);
  if (position === undefined) throw new EventsError('INVALID_PARAMS', 'Invalid params.cursor: not a cursor this server issued', { field: 'params.cursor' });
  return position;
}

/** Registers the methods on a 2026-07-28 server; another revision leaves them unknown (-32601). */
export function registerEventMethods(server: Server, runtime: EventsRuntime, deps: McpDeps, caller: EventsCaller): void {
  const handle = (work: (params: unknown) => Promise<Record<string, unknown>>) => (params: unknown, ctx: ServerContext) =>
    work(params).catch((error: unknown) => {
      throw toProtocolError(error, ctx.mcpReq.id, deps.logger);
    });

  server.setRequestHandler(
    'events/list',
    SCHEMAS,
    handle(async (params) => {
      const { cursor } = parseEventParams(ListParams, params);
      // One page: a cursor is one we never issued.
      if (cursor !== undefined) throw new EventsError('INVALID_PARAMS', 'Invalid params.cursor: events/list has a single page', { field: 'params.cursor' });
      return { resultType: 'complete', events: listEventTypes(deliveryModes(runtime)) };
    }),
  );

  server.setRequestHandler(
    'events/poll',
    SCHEMAS,
    handle(async (params) => {
      const request = parseEventParams(PollParams, params);
      const type = eventTypeNamed(request.name);
      const filter = type.parse(request.arguments);
      const cursor = cursorPosition(request.cursor);
      // The first poll checks the operation; later ones read the caller's own log, which holds nothing of anyone else's.
      if (cursor === null && filter.operationId !== undefined) await checkOwnOperation(deps, caller.ownerId, filter.operationId);
      const read = await readEvents(
        runtime.log,
        {
          ownerId: caller.ownerId,
          name: type.name,
          ...(filter.operationId === undefined ? {} : { operationId: filter.operationId }),
          match: (entry) => matchesFilter(filter, entry),
          cursor,
          ...(request.maxAgeMs === undefined ? {} : { maxAgeMs: request.maxAgeMs }),
          maxEvents: Math.min(request.maxEvents ?? MAX_EVENTS_PER_POLL, MAX_EVENTS_PER_POLL),
        },
        readSettingsOf(runtime),
        runtime.now(),
      );
      return {
        resultType: 'complete',
        // "poll carries the cursor at the response level"
        events: read.entries.map((entry) => occurrenceOf(entry)),
        cursor: encodeEventCursor(read.position),
        truncated: read.truncated,
        hasMore: read.hasMore,
        nextPollMs: runtime.settings.nextPollMs,
      };
    }),
  );

  server.setRequestHandler(
    'events/subscribe',
    SCHEMAS,
    handle(async (params) => {
      const webhooks = webhooksFor(runtime, caller);
      const request = parseEventParams(SubscribeParams, params);
      const type = eventTypeNamed(request.name);
      const filter = type.parse(request.arguments);
      const url = callbackUrl(request.delivery, webhooks.callbackMode);
      // "Servers MUST reject other values with InvalidParams"; the reason never repeats the value.
      const secret = parseWebhookSecret(request.delivery.secret);
      if (!secret.ok) throw new EventsError('INVALID_PARAMS', `Invalid params.delivery.secret: ${secret.reason}`, { field: 'params.delivery.secret' });
      const cursor = cursorPosition(request.cursor);
      const operation = filter.operationId === undefined ? undefined : await checkOwnOperation(deps, caller.ownerId, filter.operationId);
      const outcome = await webhooks.subscriptions.subscribe({
        ownerId: caller.ownerId,
        name: type.name,
        arguments: filter,
        url,
        secret: secret.secret,
        cursor,
        ...(request.maxAgeMs === undefined ? {} : { maxAgeMs: request.maxAgeMs }),
        ...(request.ttlMs === undefined ? {} : { ttlMs: request.ttlMs }),
        ...(operation && isTerminal(operation.status) ? { operationEnded: true } : {}),
      });
      return {
        resultType: 'complete',
        id: outcome.id,
        refreshBefore: outcome.refreshBefore === null ? null : new Date(outcome.refreshBefore).toISOString(),
        cursor: encodeEventCursor(outcome.position),
        truncated: outcome.truncated,
        ...(outcome.deliveryStatus ? { deliveryStatus: outcome.deliveryStatus } : {}),
      };
    }),
  );

  server.setRequestHandler(
    'events/unsubscribe',
    SCHEMAS,
    handle(async (params) => {
      const webhooks = webhooksFor(runtime, caller);
      const request = parseEventParams(UnsubscribeParams, params);
      const type = eventTypeNamed(request.name);
      const filter = type.parse(request.arguments);
      const url = callbackUrl(request.delivery, webhooks.callbackMode);
      await webhooks.subscriptions.unsubscribe({ ownerId: caller.ownerId, name: type.name, arguments: filter, url });
      return { resultType: 'complete' };
    }),
  );
}

/**
 * "events/subscribe and events/unsubscribe MUST be called with an authenticated principal.
 * Servers MUST reject calls without an authorized principal with Forbidden."
 */
function webhooksFor(runtime: EventsRuntime, caller: EventsCaller): NonNullable<EventsRuntime['webhooks']> {
  if (!caller.authenticated) {
    throw new EventsError('FORBIDDEN', 'Webhook subscriptions need an authenticated principal (OAuth or IAM); poll and push work without one', {
      reason: 'unauthenticated',
    });
  }
  if (!runtime.webhooks)
    throw new EventsError('UNSUPPORTED', 'This server does not deliver events by webhook; use poll or push', { feature: 'deliveryMode', value: 'webhook' });
  return runtime.webhooks;
}

/** The callback URL, checked for its shape now ("InvalidParams"); its addresses are checked at each delivery. */
function callbackUrl(delivery: { mode?: string | undefined; url: unknown }, mode: 'aws' | 'local'): string {
  if (delivery.mode !== undefined && delivery.mode !== 'webhook') {
    throw new EventsError('UNSUPPORTED', `Delivery mode ${delivery.mode.slice(0, 50)} is not one events/subscribe takes; it takes webhook`, {
      feature: 'deliveryMode',
      value: delivery.mode.slice(0, 50),
    });
  }
  const parsed = parseCallbackUrl(delivery.url, mode);
  if (!parsed.ok) throw new EventsError('INVALID_PARAMS', `Invalid params.delivery.url: ${parsed.reason}`, { field: 'params.delivery.url' });
  return parsed.url.href;
}
