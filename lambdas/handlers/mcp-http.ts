/**
 * Lambda entry point for the MCP endpoint behind a Function URL (payload v2.0, invoke mode
 * RESPONSE_STREAM). Wiring only: clients and the tool catalog are built once per container
 * (the DynamoDB, Step Functions, Lambda, S3 and SQS clients on first use),
 * the caller is authenticated at the edge (function-url-principal.ts), and the shared fetch
 * handler's responses are streamed as they are produced.
 */
import { HotGetItem } from '../aws/hot-get-item.ts';
import { lambdaEnvironmentWire } from '../aws/lambda-environment-wire.ts';
import { lazyDynamoDbClient } from '../aws/lazy-dynamodb-client.ts';
import { lazyDynamoDbEventHandover, lazyDynamoDbEventLog, lazyDynamoDbWebhookSubscriptions } from '../aws/lazy-dynamodb-event-stores.ts';
import { lazyDynamoDbRecordStore } from '../aws/lazy-dynamodb-record-store.ts';
import { lazyS3ResultStore } from '../aws/lazy-s3-result-store.ts';
import { lazySqsWebhookDeliveryQueue } from '../aws/lazy-sqs-webhook-delivery-queue.ts';
import { invocationDeadlineOf, lambdaStreamingRuntime, streamingFunctionUrlHandler } from '../aws/function-url-adapter.ts';
import { authenticatedFunctionUrlFetch, functionUrlAuthFromEnv } from '../aws/function-url-principal.ts';
import { DEPLOYED_CLIENT_CONFIG, runWaitingClientConfig } from '../aws/aws-client-config.ts';
import { ENV } from './environment.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { lazyStepFunctionsEngine } from '../aws/lazy-step-functions-engine.ts';
import { lazyDurableFunctionEngine } from '../aws/lazy-durable-function-engine.ts';
import { RoutingWorkflowEngine } from '../aws/routing-workflow-engine.ts';
import { composeAsyncMcpApp } from '../app/compose-async-mcp-app.ts';
import { consoleLogger } from '../logging/logger.ts';
import { createEmfMetrics } from '../observability/emf-metrics.ts';
import { observeInvocation } from '../observability/request-observer.ts';
import { lambdaInvocationTracing } from '../observability/traced-lambda-handler.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../tools/state-machine-names.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV, deployedToolArns } from '../tools/durable-function-names.ts';
import { buildToolCatalog } from '../tools/tool-catalog.ts';
import { loadDeployedToolFolders } from '../tools/deployed-tool-folders.ts';
import { withInvocationDeadline } from '../mcp/listen/listen-deadline.ts';
import { deployedEventsOptions } from '../mcp/events/deployed-events-options.ts';
import { eventsDeliveryQueueUrlFromEnv, handleToolsFromEnv, limitsFromEnv, listenFromEnv, requiredEnv } from './environment.ts';

const folders = await loadDeployedToolFolders(process.env[ENV.toolsDir] ?? 'state-machines');
// Deployed machines and durable functions have fixed names: one ARN prefix each locates them all, however many tools there are.
// The durable prefix is set only for a catalog with durable tools; one that needs it and lacks it fails the cold start, naming it.
const catalog = buildToolCatalog(
  folders,
  deployedToolArns(requiredEnv(STATE_MACHINE_ARN_PREFIX_ENV), process.env[DURABLE_FUNCTION_ARN_PREFIX_ENV] || undefined),
);
const metrics = createEmfMetrics();
const limits = limitsFromEnv();
// Each attempt of each call is bounded, so none outlasts the function (or a listen stream's graceful end).
// Built on the first call that needs it: a cold start's initialize, tools/list and poll do not.
const table = { client: lazyDynamoDbClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
// A poll's GetItem goes beside the SDK (hot-get-item.ts), signed with the function's own credentials
// (lambda-environment-wire.ts), or with the client's parts where the environment is not certain.
const operationReads = new HotGetItem(table.client, lambdaEnvironmentWire(process.env), {
  onWireDropped: (reason) => consoleLogger.warn('hot GetItem wire given up: polls take the SDK path', { reason }),
});
const deliveryQueueUrl = eventsDeliveryQueueUrlFromEnv();
// Every part is an AWS one: none of the in-process defaults the local stack's app has (async-mcp-app.ts).
const app = composeAsyncMcpApp({
  store: lazyDynamoDbRecordStore({
    ...table,
    operationReads,
    onWireDropped: (reason) => consoleLogger.warn("hot wire of a start's writes given up: they take the SDK path", { reason }),
  }),
  // Each client built on its engine's first call: a poll never calls Step Functions or Lambda, so a cold start loads neither.
  // A durable tool's synchronous run waits on its Invoke as an EXPRESS run waits on StartSyncExecution.
  engine: new RoutingWorkflowEngine(
    lazyStepFunctionsEngine(runWaitingClientConfig(limits.maxBlockingSeconds), {
      onWireDropped: (reason) => consoleLogger.warn('hot StartExecution wire given up: starts take the SDK path', { reason }),
    }),
    lazyDurableFunctionEngine(runWaitingClientConfig(limits.maxBlockingSeconds)),
  ),
  catalog,
  limits,
  handleTools: handleToolsFromEnv(),
  results: { store: lazyS3ResultStore(requiredEnv(ENV.resultsBucket)) },
  secretKey: secretsManagerKey(requiredEnv(ENV.secretArn)),
  metrics,
  // No wake-up signal: status-sync is another function, so listen streams read at their interval.
  listen: { enabled: listenFromEnv() },
  // The Events extension on the operations table, its webhook jobs on the stack's delivery queue.
  events: deployedEventsOptions({
    log: lazyDynamoDbEventLog(table),
    subscriptions: lazyDynamoDbWebhookSubscriptions(table),
    handover: lazyDynamoDbEventHandover(table),
    // The SQS client loads on the first enqueue: a poll never enqueues, and importing it was a quarter of a cold start.
    ...(deliveryQueueUrl ? { queue: lazySqsWebhookDeliveryQueue(deliveryQueueUrl) } : {}),
  }),
});

// Who may call (IAM, OAuth or nobody in particular) is the construct's `auth` prop; a bad setting fails the cold start.
const serve = authenticatedFunctionUrlFetch((request, principal) => app.fetch(request, principal), functionUrlAuthFromEnv(process.env), {
  logger: consoleLogger,
});

const observe = observeInvocation(metrics);
// With the construct's tracing setting, the SDK starts at init (loaded from beside the bundle).
const traced = lambdaInvocationTracing('async-mcp');

/**
 * Lambda entry point, wrapped by `awslambda.streamifyResponse`. Log lines carry the request
 * id; metrics and spans are flushed once the response stream has ended; a listen stream ends
 * before the function's timeout.
 */
export const handler = streamingFunctionUrlHandler(serve, lambdaStreamingRuntime(), (context, invocation) =>
  traced(() => observe(context, () => withInvocationDeadline(invocationDeadlineOf(context), invocation))),
);
