/**
 * Subscription arguments as filters over log entries. The event types this server offers
 * filter on the operation and the tool only; an argument left out matches every entry.
 */
import type { EventEntry } from './event-log.ts';

/** The arguments a subscription filters on, as validated at the edge. */
export interface EventFilter {
  readonly operationId?: string;
  readonly tool?: string;
}

/** Whether `entry` is one a subscription with `filter` receives. */
export function matchesFilter(filter: EventFilter, entry: Pick<EventEntry, 'operationId' | 'tool'>): boolean {
  return (filter.operationId === undefined || filter.operationId === entry.operationId) && (filter.tool === undefined || filter.tool === entry.tool);
}
