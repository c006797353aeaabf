/**
 * The operations core a deployed built-in worker uses: the operations table and Step
 * Functions, built once per container on first use (the local runtime supplies its own).
 * Its store counts what the worker changes (a question asked is `InputRequired`); the
 * worker's handler flushes `deployedMetrics` after each call.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DEPLOYED_CLIENT_CONFIG } from '../aws/aws-client-config.ts';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { ENV } from '../handlers/environment.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
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
  const table = { client: new DynamoDBClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
  operations ??= createOperations({
    // A question asked is an `operation.input_required` occurrence, appended and fanned out here.
    store: deployedEventRecordingStore(new ObservedRecordStore(new DynamoDbRecordStore(table), deployedMetrics), table, consoleLogger),
    engine: new StepFunctionsEngine(new SFNClient(DEPLOYED_CLIENT_CONFIG)),
    input: mcpInputProtocol,
  });
  return operations;
}
