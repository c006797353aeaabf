/**
 * The app as one process runs it (the local stack, the testing kit, tests and benches): the
 * composition root with the Events parts only a single process runs as its defaults (the log
 * and subscriptions in memory, the in-process delivery queue). The deployed MCP function
 * composes its app without them (compose-async-mcp-app.ts), so its bundle carries none.
 */
import { IN_PROCESS_EVENTS } from '../mcp/events/in-process-events.ts';
import { composeAsyncMcpApp, type AsyncMcpApp, type AsyncMcpAppOptions } from './compose-async-mcp-app.ts';

export type { AsyncMcpApp, AsyncMcpAppOptions, EventsAppOptions } from './compose-async-mcp-app.ts';

/** The app over `options`, with the in-process Events parts for whatever `options.events` leaves out. */
export function createAsyncMcpApp(options: AsyncMcpAppOptions): AsyncMcpApp {
  return composeAsyncMcpApp(options, IN_PROCESS_EVENTS);
}
