/**
 * The operations core a deployed built-in worker uses: the operations table and Step
 * Functions, built once per container on first use (the local runtime supplies its own).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { ENV } from '../aws/operations-table.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
import { requiredEnv } from '../handlers/environment.ts';
import { OperationsService } from '../operations/operations-service.ts';

let operations: OperationsService | undefined;

export function deployedOperations(): OperationsService {
  operations ??= new OperationsService(
    new DynamoDbRecordStore({ client: new DynamoDBClient({}), tableName: requiredEnv(ENV.tableName) }),
    new StepFunctionsEngine(new SFNClient({})),
  );
  return operations;
}
