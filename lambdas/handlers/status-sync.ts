/**
 * Lambda entry point for EventBridge "Step Functions Execution Status Change" events.
 * Wiring only. A thrown error makes EventBridge retry (then the DLQ).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { ENV } from '../aws/operations-table.ts';
import { lazyS3ResultStore } from '../aws/lazy-s3-result-store.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
import { createStatusSyncHandler, type ExecutionStatusChangeEvent } from '../aws/status-sync.ts';
import { consoleLogger } from '../logging/logger.ts';
import { OperationsService } from '../operations/operations-service.ts';
import { limitsFromEnv, requiredEnv } from './environment.ts';

const engine = new StepFunctionsEngine(new SFNClient({}));
const operations = new OperationsService(
  new DynamoDbRecordStore({ client: new DynamoDBClient({}), tableName: requiredEnv(ENV.tableName) }),
  engine,
  limitsFromEnv(),
  undefined,
  consoleLogger,
  { store: lazyS3ResultStore(requiredEnv(ENV.resultsBucket)) },
);

export const handler: (event: ExecutionStatusChangeEvent) => Promise<void> = createStatusSyncHandler(operations, engine, consoleLogger);
