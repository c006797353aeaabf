/**
 * The whole system on one machine, on real parts: dynalite serves the DynamoDB API
 * (with DynamoDB's size limits and a lazy TTL sweeper), the Step Functions facade runs
 * the tool definitions with their workers in-process, a local event bus delivers the
 * status-change events the AWS rule's pattern selects to the status-sync handler, and
 * node:http serves the same MCP fetch handler the Lambda runs. The unmodified AWS
 * SDK clients talk to both local services.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import { SFNClient } from '@aws-sdk/client-sfn';
import { localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { AWS_CLIENT_CONFIG } from '../lambdas/aws/aws-client-config.ts';
import { DynamoDbRecordStore } from '../lambdas/aws/dynamodb-record-store.ts';
import { HotGetItem } from '../lambdas/aws/hot-get-item.ts';
import { createOperationEventsPublisher } from '../lambdas/aws/operation-events-publisher.ts';
import { statusChangePattern, statusChangePrefixPattern } from '../lambdas/aws/status-events.ts';
import { StepFunctionsEngine } from '../lambdas/aws/step-functions-engine.ts';
import { DurableFunctionEngine } from '../lambdas/aws/durable-function-engine.ts';
import { RoutingWorkflowEngine } from '../lambdas/aws/routing-workflow-engine.ts';
import type { WorkflowEngine } from '../lambdas/operations/ports.ts';
import { createAsyncMcpApp, type AsyncMcpApp, type EventsAppOptions } from '../lambdas/app/async-mcp-app.ts';
import { DynamoDbEventHandover } from '../lambdas/aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../lambdas/aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { buildToolCatalog } from '../lambdas/tools/tool-catalog.ts';
import { startDurableTools } from './local-durable-tools.ts';
import { loadLocalTools, type LocalTools } from './local-tools.ts';
import { LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION } from './local-scope.ts';
import { principalOf } from './local-principal.ts';
import type { OperationsLimits } from '../lambdas/operations/operations-service.ts';
import type { ToolCatalog } from '../lambdas/operations/tool-spec.ts';
import { withResultStore } from '../lambdas/results/write-result.ts';
import { startLocalDynamo } from './dynamodb/dynamo-local.ts';
import { startLocalResults } from './s3/local-results.ts';
import { startTtlSweeper, type TtlSweeperOptions } from './dynamodb/dynamo-ttl-sweeper.ts';
import { createLocalEventBus } from './events/event-bus.ts';
import { endedBadly, failedRunLine, operationIdOf } from './failed-run-log.ts';
import { serveFetch } from './node-http-server.ts';
import { startSfnFacade } from './stepfunctions/sfn-facade.ts';
import { DEFAULT_WORKERS_DIR } from './worker-modules.ts';
import { freshModulesUnder } from './fresh-modules.ts';
import { createToolReloader, type ToolsReload } from './tool-reloader.ts';
import { localSecretKey } from './secretsmanager/local-secret.ts';
import { withOperations } from '../lambdas/workers/built-in-scope.ts';
import { withOAuth } from '../lambdas/auth/authenticated-fetch.ts';
import { consoleLogger } from '../lambdas/logging/logger.ts';
import type { MetricsRecorder } from '../lambdas/observability/metrics-recorder.ts';
import { withRequestContext } from '../lambdas/observability/request-context.ts';
import type { OAuthConfig } from '../lambdas/auth/oauth-config.ts';
import { createOAuthResourceServer } from '../lambdas/auth/oauth-resource-server.ts';
import type { ListenOptions } from '../lambdas/mcp/listen/listen-handler.ts';
import { createStatusSignal } from '../lambdas/operations/status-signal.ts';
import { createTaskMocks } from './stepfunctions/sfn-facade-mocks.ts';
import { stateMachineArn } from './stepfunctions/sfn-facade-arns.ts';
import { startPutEventsEndpoint } from './events/put-events-endpoint.ts';
import { createWebhookDelivery, type WebhookDeliveryOptions } from './events/webhook-delivery.ts';
import { DEFAULT_HOST, DEFAULT_PORT } from './start-defaults.ts';

export { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_WORKERS_DIR };

export interface LocalStackOptions {
  toolsDir: string;
  /** Directory of the worker modules the definitions name; the repository's by default. */
  workersDir?: string;
  /** The tools of `toolsDir` and `workersDir`, already loaded (loadLocalTools); loaded here when absent. */
  tools?: LocalTools;
  /** Keep DynamoDB data and execution history here across restarts; in memory when absent. */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  limits?: OperationsLimits;
  /** Serve the handle tools to clients without async support (`ASYNC_MCP_HANDLE_TOOLS`). @default true */
  handleTools?: boolean;
  /** Scales Wait states (tests use a small factor); 1 = real time. */
  waitTimeScale?: number;
  /** How late expired records are deleted (DynamoDB's TTL is lazy too). @default lagSeconds 60, intervalMs 10000 */
  ttl?: Pick<TtlSweeperOptions, 'lagSeconds' | 'intervalMs'>;
  /**
   * Serve as an OAuth 2.1 resource server of this issuer: every request needs its bearer
   * token, and the token's subject is the principal. The resource URL is the stack's own.
   */
  oauth?: Omit<OAuthConfig, 'resourceUrl'>;
  /** Where operation, poll, lag and input metrics go; none by default, so a local run prints no EMF lines. */
  metrics?: MetricsRecorder;
  /** Told one line (failed-run-log.ts) for each STANDARD run that fails or times out; `npm start` prints it. */
  onFailedRun?: (line: string) => void;
  /** `subscriptions/listen` settings (tests shorten streams); status writes wake open streams at once. */
  listen?: ListenOptions;
  /**
   * POST each `Operation Status Changed` event, signed (Standard Webhooks), to this loopback URL
   * (`parseLoopbackWebhookUrl`). The events go through the local PutEvents endpoint either way.
   */
  eventsWebhook?: Pick<WebhookDeliveryOptions, 'url' | 'secret' | 'maxAttempts' | 'backoffMs'>;
  /** The MCP Events extension's settings (docs/mcp-events.md); its log and subscriptions are in the local table. */
  events?: EventsAppOptions;
  /**
   * Tools can be reloaded while the stack serves (`reloadTools`, `npm start -- --watch`); the
   * durable service then runs even with no durable tool, so that one can be added.
   */
  reloadable?: boolean;
}

export interface LocalStack {
  url: URL;
  catalog: ToolCatalog;
  app: AsyncMcpApp;
  /** The Step Functions endpoint, for inspecting executions with an SFNClient. */
  sfnEndpoint: string;
  /** The local durable-execution endpoint (the Lambda API's durable half), when a tool is a durable function. */
  durableEndpoint?: string;
  /** The DynamoDB endpoint and the operations table, for inspecting records with a DynamoDBClient. */
  dynamo: { endpoint: string; tableName: string; pid: number };
  /** The results bucket (s3rver), for inspecting stored results with an S3Client. */
  results: { endpoint: string; bucketName: string };
  /** The SDK clients the server itself uses (tests add middleware to count its AWS calls). */
  awsClients: { dynamodb: DynamoDBClient; sfn: SFNClient; eventBridge: EventBridgeClient; lambda?: LambdaClient };
  /** The local EventBridge endpoint status sync puts operation events on (PutEvents only, signed with this run's own key). */
  eventsEndpoint: string;
  /**
   * With `reloadable`: reads the tool folders again and swaps in the tools the changed paths
   * touch, as a deploy would (tool-reloader.ts); the catalog above follows.
   */
  reloadTools?: (changedPaths: readonly string[]) => Promise<ToolsReload>;
  /** Resolves when every status event published so far has been delivered (and its operation event posted to the webhook). */
  drainEvents(): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  // npm start loads and checks them before it imports this module (local-tools.ts).
  const { folders, workersDir, workers, durableHandlers } = options.tools ?? (await loadLocalTools(options.toolsDir, options.workersDir));
  const machineFolders = folders.filter((folder) => folder.durable === undefined);
  const closers: Array<() => Promise<void>> = [];
  try {
    const dynamo = await startLocalDynamo(options.dataDir ? { dataDir: resolve(options.dataDir, 'dynamodb') } : {});
    closers.push(() => dynamo.close());
    const sweeper = startTtlSweeper({ client: dynamo.client, tableName: dynamo.tableName, ...options.ttl });
    closers.push(() => sweeper.close());
    const host = options.host ?? DEFAULT_HOST;
    // The AWS endpoints are the server's own parts: they listen on 127.0.0.1 whatever `host` says.
    const results = await startLocalResults(options.dataDir ? { dataDir: resolve(options.dataDir, 'results') } : {});
    closers.push(() => results.close());

    // The AWS rule's pattern, over the same STANDARD machines the CDK stack puts in it
    // (EXPRESS executions emit no events). Only EXPRESS tools: nothing is ever published.
    // Reloadable, every machine of the facade: a tool added or made STANDARD later is in it too.
    const arnScope = { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT_ID };
    const standardArns = machineFolders
      .filter((folder) => folder.config.workflowType === 'STANDARD')
      .map((folder) => stateMachineArn(arnScope, folder.config.name));
    const rulePattern = options.reloadable
      ? statusChangePrefixPattern(stateMachineArn(arnScope, ''))
      : standardArns.length > 0
        ? statusChangePattern(standardArns)
        : undefined;
    // The app is built after the facade (it needs the ARNs), but events may only flow once it exists.
    let app: AsyncMcpApp | undefined;
    const bus = createLocalEventBus(
      async (event) => {
        if (!app) throw new Error('status-sync is not ready yet');
        await app.statusSync(event);
        const { onFailedRun } = options;
        if (onFailedRun && endedBadly(event.detail)) {
          // The input is left out of an event over 256 KB: the record then names the operation.
          const operation = operationIdOf(event.detail) ?? (await app.operations.findByExecutionName(event.detail.name).catch(() => undefined))?.token;
          onFailedRun(failedRunLine(event.detail, operation));
        }
      },
      rulePattern ? { pattern: rulePattern } : {},
    );
    closers.push(async () => bus.close());

    // Operation events go the AWS way (PutEvents on the default bus), then on to the webhook,
    // signed. So the endpoint takes only this run's own key: an event another process puts
    // would otherwise reach the webhook as genuine.
    const webhook = options.eventsWebhook ? createWebhookDelivery(options.eventsWebhook) : undefined;
    if (webhook) closers.push(() => webhook.close());
    const eventsCredentials = { accessKeyId: `LOCAL${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64') };
    const events = await startPutEventsEndpoint({
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT_ID,
      credentials: eventsCredentials,
      onEvent: (event) => webhook?.deliver(event.id, event),
    });
    closers.push(() => events.close());
    const eventBridge = new EventBridgeClient({ ...AWS_CLIENT_CONFIG, region: LOCAL_REGION, endpoint: events.endpoint, credentials: eventsCredentials });
    closers.push(async () => eventBridge.destroy());
    // Closers run last-pushed first: the runs stop, then the events they raised are synced and
    // published, and only then do the EventBridge endpoint and its client close.
    closers.push(() => bus.close());

    const facade = await startSfnFacade({
      // An existing machine (stateMachineArn) runs as its stand-in: definition.asl.json, mocks.json, or a Fail naming the ARN.
      stateMachines: machineFolders.map((f) => ({
        name: f.config.name,
        definitionText: f.localDefinitionText,
        workflowType: f.config.workflowType,
        ...(f.mocks ? { taskMocks: createTaskMocks(f.mocks) } : {}),
      })),
      // In AWS a worker finds the bucket in its environment; in-process, this stack's bucket is its.
      resolveWorker: (name) => {
        const worker = workers.get(name);
        // The loader checked that every worker a definition names exists.
        if (!worker) throw new Error(`No worker named ${name}`);
        // Built-in workers write through this stack's core, as the deployed ones do through the table.
        return (event) => {
          if (!app) throw new Error('The local stack is not ready yet');
          const { operations } = app;
          return withResultStore(results.store, () => withOperations(operations, () => worker(event)));
        };
      },
      onStatusChange: (event) => bus.publish(event),
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT_ID,
      ...(options.dataDir ? { dataDir: resolve(options.dataDir, 'stepfunctions') } : {}),
      ...(options.waitTimeScale === undefined ? {} : { waitTimeScale: options.waitTimeScale }),
    });
    closers.push(() => facade.close());

    // Durable tools run in this process on the local durable service, their handlers inside this
    // stack's core and results bucket, as the request_input and report_progress workers do.
    // Reloadable, the service runs even without one, so that a durable tool can be added.
    const durable =
      durableHandlers.size > 0 || options.reloadable ? await startDurableTools(durableHandlers, () => app, results.store, options, closers) : undefined;

    const reloader =
      options.reloadable && durable
        ? createToolReloader({
            toolsDir: options.toolsDir,
            workersDir,
            folders,
            facade,
            durable,
            workers,
            fresh: freshModulesUnder([options.toolsDir, workersDir]),
          })
        : undefined;
    const catalog =
      reloader?.catalog ?? buildToolCatalog(folders, (name, folder) => (folder.durable && durable ? durable.functionArn(name) : facade.stateMachineArn(name)));
    // StartSyncExecution normally goes to a `sync-` host prefix; the facade serves every action on one host.
    const sfn = new SFNClient({
      ...AWS_CLIENT_CONFIG,
      region: LOCAL_REGION,
      endpoint: facade.endpoint,
      credentials: LOCAL_CREDENTIALS,
      disableHostPrefix: true,
    });
    closers.push(async () => sfn.destroy());
    const stepFunctions = new StepFunctionsEngine(sfn);
    const engine: WorkflowEngine = durable ? new RoutingWorkflowEngine(stepFunctions, new DurableFunctionEngine(durable.lambda)) : stepFunctions;
    durable?.deliverTo(engine);
    // One key for the MCP edge and the events' owner ids, as the two functions share one secret in AWS.
    const secretKey = localSecretKey(options.dataDir ? resolve(options.dataDir, 'secret.key') : undefined);
    app = createAsyncMcpApp({
      // The poll's read as the MCP function sends it (lambdas/aws/hot-get-item.ts).
      store: new DynamoDbRecordStore({ client: dynamo.client, tableName: dynamo.tableName, operationReads: new HotGetItem(dynamo.client) }),
      engine,
      catalog,
      ...(options.limits ? { limits: options.limits } : {}),
      handleTools: options.handleTools !== false,
      results: { store: results.store },
      secretKey,
      allowedHostnames: [...new Set([...localhostAllowedHostnames(), host])],
      ...(options.metrics ? { metrics: options.metrics } : {}),
      listen: { ...options.listen, wake: createStatusSignal() },
      // As in AWS: the event log and webhook subscriptions in the operations table; delivery jobs run in process.
      events: {
        log: new DynamoDbEventLog(dynamo),
        subscriptions: new DynamoDbWebhookSubscriptions(dynamo),
        // A redelivered end fans out again what its first delivery did not hand over, as deployed.
        handover: new DynamoDbEventHandover(dynamo),
        ...options.events,
      },
      // The events status sync emits in AWS (lambdas/handlers/status-sync.ts), on the local default bus.
      operationEvents: createOperationEventsPublisher({
        client: eventBridge,
        eventBusName: 'default',
        serverKey: secretKey,
        logger: consoleLogger,
        ...(options.metrics ? { metrics: options.metrics } : {}),
      }),
    });
    const mcpApp = app;
    const webhookQueue = app.webhookQueue;
    if (webhookQueue) closers.push(() => webhookQueue.close());
    // The resource URL is known once the server listens; requests only arrive after that.
    let serve: (request: Request) => Promise<Response> = (request) => mcpApp.fetch(request, principalOf(request));
    // As in Lambda: each request has a log context named by a request id, and its metrics are flushed once answered.
    let requests = 0;
    const observed = (request: Request) =>
      withRequestContext({ function_request_id: `local-${++requests}` }, () => serve(request)).finally(() => options.metrics?.flush());
    const http = await serveFetch(observed, {
      host,
      port: options.port ?? DEFAULT_PORT,
      path: '/mcp',
    });
    closers.push(() => http.close());
    if (options.oauth) {
      const oauth = createOAuthResourceServer({ ...options.oauth, resourceUrl: http.url.href }, { logger: consoleLogger });
      serve = withOAuth(oauth, (request, principal) => mcpApp.fetch(request, principal));
    }

    return {
      url: http.url,
      catalog,
      app,
      sfnEndpoint: facade.endpoint,
      ...(durable ? { durableEndpoint: durable.endpoint } : {}),
      dynamo: { endpoint: dynamo.endpoint, tableName: dynamo.tableName, pid: dynamo.pid },
      results: { endpoint: results.endpoint, bucketName: results.bucketName },
      awsClients: { dynamodb: dynamo.client, sfn, eventBridge, ...(durable ? { lambda: durable.lambda } : {}) },
      eventsEndpoint: events.endpoint,
      ...(reloader ? { reloadTools: (paths: readonly string[]) => reloader.reload(paths) } : {}),
      drainEvents: async () => {
        await durable?.drain();
        await bus.drain();
        await webhook?.drain();
      },
      close: () => closeAll(closers),
    };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const close of closers.splice(0).reverse()) {
    await close().catch(() => undefined);
  }
}
