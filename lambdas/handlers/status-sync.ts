/**
 * Lambda entry point for EventBridge "Step Functions Execution Status Change" and "Durable
 * Execution Status Change" events. Wiring only. A thrown error makes EventBridge retry (then the DLQ).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { AWS_CLIENT_CONFIG, DEPLOYED_CLIENT_CONFIG } from '../aws/aws-client-config.ts';
import { ENV } from './environment.ts';
import { lazyS3ResultStore } from '../aws/lazy-s3-result-store.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { createOperationEventsPublisher } from '../aws/operation-events-publisher.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
import { lazyDurableFunctionEngine } from '../aws/lazy-durable-function-engine.ts';
import { RoutingWorkflowEngine } from '../aws/routing-workflow-engine.ts';
import { createStatusSyncHandler, type StatusChangeEvent } from '../aws/status-sync.ts';
import { consoleLogger } from '../logging/logger.ts';
import { createEmfMetrics } from '../observability/emf-metrics.ts';
import { ObservedRecordStore } from '../observability/observed-record-store.ts';
import type { InvocationContext } from '../observability/request-observer.ts';
import { tracedLambdaHandler } from '../observability/traced-lambda-handler.ts';
import { createOperations } from '../operations/operations-service.ts';
import { shapeFinishedResult } from '../mcp/results/result-shaping.ts';
import { deployedEventRecordingStore } from './deployed-event-stores.ts';
import { settleEventsOf } from '../events/event-recorder.ts';
import { limitsFromEnv, requiredEnv } from './environment.ts';

// The Lambda client loads on the first durable event: a stack of state machines alone never loads it.
const engine = new RoutingWorkflowEngine(new StepFunctionsEngine(new SFNClient(DEPLOYED_CLIENT_CONFIG)), lazyDurableFunctionEngine(DEPLOYED_CLIENT_CONFIG));
const metrics = createEmfMetrics();
const table = { client: new DynamoDBClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
// Ends (completed, failed, cancelled) are counted where status-sync writes them, and appended to the event log (MCP Events).
const store = deployedEventRecordingStore(new ObservedRecordStore(new DynamoDbRecordStore(table), metrics), table, consoleLogger);
const operations = createOperations({
  store,
  engine,
  limits: limitsFromEnv(),
  logger: consoleLogger,
  results: { store: lazyS3ResultStore(requiredEnv(ENV.resultsBucket)) },
  // Results are checked against the contract their record carries: this function needs no
  // catalog, and it starts nothing and relays no questions, so it needs no input protocol.
  shapeResult: shapeFinishedResult,
});

// The stack names the bus, and the server key's secret (read as the MCP function reads it, on
// the first event): an event names its owner by an HMAC under that key. Without either (an
// older stack), no events are emitted. The publisher retries; each call is bounded, so an
// unreachable EventBridge costs seconds, never the timeout.
const eventBusName = process.env[ENV.eventBusName];
const secretArn = process.env[ENV.secretArn];
const eventBridge = new EventBridgeClient({
  ...AWS_CLIENT_CONFIG,
  maxAttempts: 1,
  requestHandler: { connectionTimeout: 1000, requestTimeout: 3000, throwOnRequestTimeout: true },
});
const events =
  eventBusName && secretArn
    ? createOperationEventsPublisher({ client: eventBridge, eventBusName, serverKey: secretsManagerKey(secretArn), logger: consoleLogger, metrics })
    : undefined;
if (eventBusName && !secretArn) consoleLogger.warn('operation events are off: the function has no server key secret', { missing: ENV.secretArn });

/** Lambda entry point: one event per invocation, its metrics (and spans, with tracing on) flushed when it is handled. */
export const handler: (event: StatusChangeEvent, context?: InvocationContext) => Promise<void> = tracedLambdaHandler(
  'async-mcp-status-sync',
  createStatusSyncHandler(
    operations,
    engine,
    consoleLogger,
    metrics,
    events,
    // A redelivered end finds its record terminal: its events are settled again (event-recorder.ts).
    (record) => settleEventsOf(store, record),
  ),
);
