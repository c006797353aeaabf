/**
 * The local stack's durable tools: each folder's `durable.ts` handler on the local durable
 * service, run inside the stack's core and results bucket as the built-in workers are, and the
 * rule AWS would have for their status-change events, delivered to status sync.
 */
import { resolve } from 'node:path';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { AWS_CLIENT_CONFIG } from '../lambdas/aws/aws-client-config.ts';
import { type DurableStatusChangeEvent, durableStatusChangePattern } from '../lambdas/aws/durable-status-events.ts';
import type { AsyncMcpApp } from '../lambdas/app/async-mcp-app.ts';
import type { WorkflowEngine } from '../lambdas/operations/ports.ts';
import { withResultStore } from '../lambdas/results/write-result.ts';
import { withOperations } from '../lambdas/workers/built-in-scope.ts';
import { startLocalDurableService } from './durable/index.ts';
import { LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION } from './local-scope.ts';
import { createLocalEventBus } from './events/event-bus.ts';
import { failedRunLine, operationIdOf } from './failed-run-log.ts';
import type { ExecutionStatusChangeEvent as MachineStatusEvent } from './stepfunctions/sfn-facade.ts';

type MachineStatusDetail = MachineStatusEvent['detail'];

export interface DurableTools {
  endpoint: string;
  lambda: LambdaClient;
  functionArn(tool: string): string;
  /** Serves `handler` as the tool's function from now on; running executions keep the handler they started with. */
  register(tool: string, handler: DurableLambdaHandler): void;
  /** Status changes reach status sync once the engine that reads them exists. */
  deliverTo(engine: WorkflowEngine): void;
  drain(): Promise<void>;
}

/**
 * The local durable service with every durable tool registered, and the rule AWS would have:
 * its status-change events, matched by the stack's pattern, delivered to status sync.
 */
export async function startDurableTools(
  handlers: ReadonlyMap<string, DurableLambdaHandler>,
  appOf: () => AsyncMcpApp | undefined,
  resultStore: Parameters<typeof withResultStore>[0],
  options: { dataDir?: string; onFailedRun?: (line: string) => void },
  closers: Array<() => Promise<void>>,
): Promise<DurableTools> {
  const functionArnPrefix = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:`;
  let engine: WorkflowEngine | undefined;
  const bus = createLocalEventBus<DurableStatusChangeEvent>(
    async (event) => {
      const app = appOf();
      if (!app || !engine) throw new Error('status-sync is not ready yet');
      await app.statusSync(event);
      const { onFailedRun } = options;
      if (onFailedRun && (event.detail.status === 'FAILED' || event.detail.status === 'TIMED_OUT')) {
        onFailedRun(await durableFailedRunLine(event, engine, app));
      }
    },
    { pattern: durableStatusChangePattern(functionArnPrefix) },
  );
  const inStack =
    (handler: DurableLambdaHandler): DurableLambdaHandler =>
    (event, context) => {
      const app = appOf();
      if (!app) throw new Error('The local stack is not ready yet');
      const { operations } = app;
      return withResultStore(resultStore, () => withOperations(operations, () => handler(event, context)));
    };
  const functions: Record<string, DurableLambdaHandler> = {};
  for (const [name, handler] of handlers) functions[name] = inStack(handler);
  const service = await startLocalDurableService({
    functions,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT_ID,
    onStatusChange: (event) => bus.publish(event),
    ...(options.dataDir ? { dataDir: resolve(options.dataDir, 'durable') } : {}),
  });
  closers.push(() => service.close());
  const lambda = new LambdaClient({ ...AWS_CLIENT_CONFIG, region: LOCAL_REGION, endpoint: service.endpoint, credentials: LOCAL_CREDENTIALS });
  closers.push(async () => lambda.destroy());
  // Closed before the service: the runs stop first, then their last events are synced.
  closers.push(() => bus.close());
  return {
    endpoint: service.endpoint,
    lambda,
    functionArn: (tool) => `${functionArnPrefix}${tool}:$LATEST`,
    // The service pins each execution to the handler it started with, as Lambda pins a version.
    register: (tool, handler) => service.service.register(tool, inStack(handler)),
    deliverTo: (next) => {
      engine = next;
    },
    drain: () => bus.drain(),
  };
}

/** The console's line for a durable run that failed or timed out (failed-run-log.ts), from the execution itself. */
async function durableFailedRunLine(event: DurableStatusChangeEvent, engine: WorkflowEngine, app: AsyncMcpApp): Promise<string> {
  const { detail } = event;
  const snapshot = await engine.describe(detail.durableExecutionArn).catch(() => undefined);
  const name = detail.durableExecutionArn.split('/durable-execution/')[1]?.split('/')[0] ?? detail.durableExecutionArn;
  const tool = (detail.functionArn ?? '').split(':function:')[1]?.split(':')[0] ?? 'unknown';
  // In the shape of a state machine's detail, which the console's line is written from.
  const asMachine: MachineStatusDetail = {
    executionArn: detail.durableExecutionArn,
    stateMachineArn: tool,
    name,
    status: detail.status === 'TIMED_OUT' ? 'TIMED_OUT' : 'FAILED',
    startDate: snapshot?.startDate?.getTime() ?? 0,
    stopDate: snapshot?.stopDate?.getTime() ?? null,
    input: snapshot?.input === undefined ? null : JSON.stringify(snapshot.input),
    inputDetails: { included: true },
    output: null,
    outputDetails: null,
    error: snapshot?.error ?? null,
    cause: snapshot?.cause ?? null,
  };
  const operation = operationIdOf(asMachine) ?? (await app.operations.findByExecutionName(name).catch(() => undefined))?.token;
  return failedRunLine(asMachine, operation);
}
