/**
 * An `EventOccurrence` on the wire (SEP-3415 "Event Occurrences"): `eventId`, `name`,
 * `timestamp`, `data`, and, in push and webhook bodies, the `cursor` after it. An occurrence
 * in an operation's trace carries its W3C context in `_meta` (`traceparent`, `tracestate`, as
 * SEP-414 places them), so a host that traces joins it to its own.
 */
import type { EventEntry } from './event-log.ts';

export function occurrenceOf(entry: EventEntry, cursor?: string): Record<string, unknown> {
  return {
    eventId: entry.eventId,
    name: entry.name,
    timestamp: new Date(entry.at).toISOString(),
    data: entry.data,
    ...(cursor === undefined ? {} : { cursor }),
    ...(entry.trace ? { _meta: { ...entry.trace } } : {}),
  };
}
