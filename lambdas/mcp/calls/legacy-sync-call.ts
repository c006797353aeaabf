/**
 * An initialize-era `tools/call` the client waits on, answered with the tool's result.
 * A question the execution asks goes to the client on this call's SSE stream, as a
 * server-to-client request; the client's answer is a new POST that any instance takes
 * (client-responses.ts), and this call waits on until the execution ends or its bound.
 * Progress and log lines the execution reports go out on the same stream as they are
 * written (`notifications/progress` for the request's `progressToken`, and
 * `notifications/message` at or above the principal's `logging/setLevel`), each before the result.
 */
import { ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { OperationError } from '../../operations/operation-error.ts';
import type { ToolSpec } from '../../operations/tool-spec.ts';
import type { McpDeps } from '../dialects/dialect.ts';
import { JSONRPC } from '../edge/json-rpc-errors.ts';
import type { RequestView } from '../edge/request-view.ts';
import { progressTokenOf, RunNotifications } from './run-notifications.ts';
import { roundOf } from '../input/input-responses.ts';
import { ServerRequests } from '../input/server-requests.ts';
import { toCallToolResult } from '../results/tool-result.ts';

/** Runs the call within the tool's sync bound, asking the client on this call's stream whatever the execution asks. */
export async function legacySyncCall(
  tool: ToolSpec,
  args: Record<string, unknown>,
  view: RequestView,
  ctx: ServerContext,
  deps: McpDeps,
  server: Server,
): Promise<Record<string, unknown>> {
  const stream = new ServerRequests(server, ctx.mcpReq.id);
  const notifications = callNotifications(view, ctx, deps);
  const step = await deps.operations.runSyncStep({
    ...roundOf({ tool, arguments: args, view, dialect: 'sync' }),
    atBound: 'stop',
    onQuestion: 'wait',
    onInput: (record) => stream.send(record.token, deps.operations.inputs.pending(record)),
    // Each record the wait reads carries the reports made since the last (an EXPRESS run has none).
    onRecord: (record) => notifications.send(record),
    signal: ctx.mcpReq.signal,
  });
  // Handed off only when the client went away (the bound stops the run): its run goes on, and
  // the SDK sends nothing for an aborted request, so this is neither an answer nor a failure to log.
  if (step.kind === 'handed-off') throw new ProtocolError(JSONRPC.INTERNAL_ERROR, 'The client went away before the call finished');
  if (step.kind !== 'finished') throw new OperationError('INTERNAL', 'The synchronous call did not finish');
  // Reports the final record brings go out before the result.
  if (step.record) await notifications.send(step.record);
  return toCallToolResult(step.outcome, tool);
}

/**
 * What a waiting initialize-era call shows of its run: progress for the request's
 * `progressToken`, and log lines at or above the principal's `logging/setLevel`.
 */
export function callNotifications(view: RequestView, ctx: ServerContext, deps: McpDeps): RunNotifications {
  const progressToken = progressTokenOf(ctx.mcpReq._meta);
  return new RunNotifications({
    ...(progressToken === undefined ? {} : { progressToken }),
    logLevel: () => deps.operations.logLevel(view.ownerId),
    notify: (notification) => ctx.mcpReq.notify(notification),
    logger: deps.logger,
    requestId: view.requestId,
  });
}
