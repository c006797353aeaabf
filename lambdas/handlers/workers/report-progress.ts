/**
 * Built-in worker `report_progress`: progress and log lines while a tool runs (see
 * lambdas/workers/report-progress-worker.ts). Deployed by the stack for every machine that
 * names `${Worker_report_progress}`; the local runtime runs it in-process. Each report is
 * also an `operation.progress` occurrence in the event log (MCP Events).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { deployedMetrics } from '../../app/deployed-operations.ts';
import { AWS_CLIENT_CONFIG } from '../../aws/aws-client-config.ts';
import { DynamoDbRecordStore } from '../../aws/dynamodb-record-store.ts';
import { ENV } from '../environment.ts';
import { StepFunctionsEngine } from '../../aws/step-functions-engine.ts';
import { consoleLogger } from '../../logging/logger.ts';
import { deployedEventRecordingStore } from '../deployed-event-stores.ts';
import { ObservedRecordStore } from '../../observability/observed-record-store.ts';
import { createOperations, type OperationsService } from '../../operations/operations-service.ts';
import { mcpInputProtocol } from '../../mcp/input/mcp-input-protocol.ts';
import { createReportProgressHandler } from '../../workers/report-progress-worker.ts';
import { requiredEnv } from '../environment.ts';

let operations: OperationsService | undefined;

/** The core, built once per container on first use, over a store that feeds the event log. */
function reportingOperations(): OperationsService {
  if (!operations) {
    const table = { client: new DynamoDBClient(AWS_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
    const store = deployedEventRecordingStore(new ObservedRecordStore(new DynamoDbRecordStore(table), deployedMetrics), table, consoleLogger);
    operations = createOperations({ store, engine: new StepFunctionsEngine(new SFNClient(AWS_CLIENT_CONFIG)), input: mcpInputProtocol });
  }
  return operations;
}

/** Lambda entry point. */
export const handler = createReportProgressHandler(reportingOperations);
