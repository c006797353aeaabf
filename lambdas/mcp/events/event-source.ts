/**
 * `eventSource` in a `CreateTaskResult` (the draft "Task Event Sources", additive to the Tasks
 * extension): the task's progress as an `operation.progress` subscription, with a cursor at
 * the task's creation so a client that subscribes late misses nothing. "Servers MUST NOT
 * include eventSource in CreateTaskResult unless the server and client have declared the
 * Events capability."
 */
import { encodeEventCursor } from '../../events/event-cursor.ts';
import { timePosition } from '../../events/event-log.ts';
import type { OperationRecord } from '../../operations/operation.ts';
import { isObject } from '../../shared/json-values.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { OPERATION_PROGRESS } from './event-catalog.ts';
import { EVENTS_EXTENSION } from './events-methods.ts';

/** The dependency sets of servers that offer events: the server factory marks its own once. */
const offering = new WeakSet<McpDeps>();

/** Marks `deps` as those of a server that offers the Events extension. */
export function offerEventSources(deps: McpDeps): void {
  offering.add(deps);
}

/** Whether per-request client capabilities declare the Events extension. */
export function declaresEventsExtension(clientCapabilities: unknown): boolean {
  const extensions = isObject(clientCapabilities) ? clientCapabilities.extensions : undefined;
  return isObject(extensions) && EVENTS_EXTENSION in extensions;
}

/** The task's event source, when both sides declared events; `undefined` otherwise. */
export function eventSourceFor(deps: McpDeps, record: OperationRecord, clientCapabilities: unknown): Record<string, unknown> | undefined {
  if (!offering.has(deps) || !declaresEventsExtension(clientCapabilities)) return undefined;
  return {
    name: OPERATION_PROGRESS,
    input: { operationId: record.token },
    // "a cursor marking the stream position at task creation": every report comes after it.
    initialCursor: encodeEventCursor(timePosition(record.createdAt)),
  };
}
