/**
 * The operations core a deployed built-in worker or durable tool function uses: the operations
 * table, Step Functions and Lambda's durable executions (that client loaded on its first call),
 * built once per container on first use (the local runtime supplies its own).
 * Its store counts what the worker changes (a question asked is `InputRequired`); the
 * worker's handler flushes `deployedMetrics` after each call.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DEPLOYED_CLIENT_CONFIG } from '../aws/aws-client-config.ts';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { ENV } from '../handlers/environment.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
import { lazyDurableFunctionEngine } from '../aws/lazy-durable-function-engine.ts';
import { RoutingWorkflowEngine } from '../aws/routing-workflow-engine.ts';
import { requiredEnv } from '../handlers/environment.ts';
import { createEmfMetrics } from '../observability/emf-metrics.ts';
import { ObservedRecordStore } from '../observability/observed-record-store.ts';
import { consoleLogger } from '../logging/logger.ts';
import { deployedEventRecordingStore } from '../handlers/deployed-event-stores.ts';
import { createOperations, type OperationsService } from '../operations/operations-service.ts';
import { mcpInputProtocol } from '../mcp/input/mcp-input-protocol.ts';

/** The metrics the deployed workers' core records into. */
export const deployedMetrics = createEmfMetrics();

let operations: OperationsService | undefined;

export function deployedOperations(): OperationsService {
  if (operations) return operations;
  const table = { client: new DynamoDBClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
  operations = createOperations({
    // A question asked is an `operation.input_required` occurrence, appended and fanned out here.
    store: deployedEventRecordingStore(new ObservedRecordStore(new DynamoDbRecordStore(table), deployedMetrics), table, consoleLogger),
    engine: new RoutingWorkflowEngine(new StepFunctionsEngine(new SFNClient(DEPLOYED_CLIENT_CONFIG)), lazyDurableFunctionEngine(DEPLOYED_CLIENT_CONFIG)),
    input: mcpInputProtocol,
  });
  return operations;
}
