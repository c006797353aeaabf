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
import { ANY_RESULT } from '../dialects/dialect-support.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { toProtocolError } from '../edge/json-rpc-errors.ts';
import { eventTypeNamed, listEventTypes } from './event-catalog.ts';
import { occurrenceOf } from './event-occurrence.ts';
import { checkOwnOperation, deliveryModes, readSettingsOf, type EventsCaller, type EventsRuntime } from './events-runtime.ts';

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
}
