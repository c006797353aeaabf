/**
 * An initialize-era `tools/call` the client waits on, answered with the tool's result.
 * A question the execution asks goes to the client on this call's SSE stream, as a
 * server-to-client request; the client's answer is a new POST that any instance takes
 * (client-responses.ts), and this call waits on until the execution ends or its bound.
 * Progress and log lines the execution reports go out on the same stream as they are
 * written (`notifications/progress` for the request's `progressToken`, and
 * `notifications/message` at or above the principal's `logging/setLevel`), each before the result.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { mintId } from '../operations/fingerprint.ts';
import { OperationError } from '../operations/operation-error.ts';
import type { SyncStep, SyncStepInput } from '../operations/operations-service.ts';
import type { ToolSpec } from '../operations/tool-spec.ts';
import type { McpDeps } from './dialects/dialect.ts';
import type { RequestView } from './request-view.ts';
import { followReports, progressTokenOf, RunNotifications } from './run-notifications.ts';
import { ServerRequests } from './server-requests.ts';
import { toCallToolResult } from './tool-result.ts';

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
  const input: SyncStepInput = {
    ownerId: view.ownerId,
    tool,
    arguments: args,
    requestId: view.requestKey,
    clientCapabilities: view.clientCapabilities,
    dialect: 'sync',
    atBound: 'stop',
    onQuestion: 'wait',
    onInput: (record) => stream.send(record.token, deps.operations.inputs.pending(record)),
  };
  // An EXPRESS run has no operation record, so it has nothing to report.
  const step = tool.workflowType === 'EXPRESS' ? await deps.operations.runSyncStep(input) : await runReporting(input, view, ctx, deps);
  if (step.kind !== 'finished') throw new OperationError('INTERNAL', 'The synchronous call did not finish');
  return toCallToolResult(step.outcome, tool);
}

/**
 * A STANDARD run, started here so its reports can be followed while the core waits on it
 * (the core's wait wakes for questions and the end only). Reports the final record brings
 * go out before the result.
 */
async function runReporting(input: SyncStepInput, view: RequestView, ctx: ServerContext, deps: McpDeps): Promise<SyncStep> {
  const record = await deps.operations.start({
    ownerId: input.ownerId,
    tool: input.tool,
    arguments: input.arguments,
    token: `sync-${mintId()}`,
    dialect: 'sync',
    ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
    ...(input.clientCapabilities === undefined ? {} : { clientCapabilities: input.clientCapabilities }),
  });
  const progressToken = progressTokenOf(ctx.mcpReq._meta);
  const notifications = new RunNotifications({
    ...(progressToken === undefined ? {} : { progressToken }),
    logLevel: () => deps.operations.logLevel(view.ownerId),
    notify: (notification) => ctx.mcpReq.notify(notification),
    logger: deps.logger,
    requestId: view.requestId,
  });
  const key = { ownerId: record.ownerId, token: record.token };
  const step = await followReports(
    { read: () => deps.operations.get(key), notifications, logger: deps.logger, requestId: view.requestId },
    () => deps.operations.runSyncStep({ ...input, resume: key }),
  );
  if (step.record) await notifications.send(step.record);
  return step;
}
