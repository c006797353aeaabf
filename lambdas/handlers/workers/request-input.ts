/**
 * Built-in worker `request_input`: asks the client a question mid-run (see
 * lambdas/workers/request-input-worker.ts). Deployed by the stack for every machine that
 * names `${Worker_request_input}`; the local runtime runs it in-process.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDbRecordStore } from '../../aws/dynamodb-record-store.ts';
import { ENV } from '../../aws/operations-table.ts';
import { StepFunctionsEngine } from '../../aws/step-functions-engine.ts';
import { OperationsService } from '../../operations/operations-service.ts';
import type { InputRequests } from '../../operations/input-requests.ts';
import { createRequestInputHandler } from '../../workers/request-input-worker.ts';
import { requiredEnv } from '../environment.ts';

let inputs: InputRequests | undefined;

/** Lambda entry point. */
export const handler = createRequestInputHandler(() => {
  // Built on first use, so the in-process local runtime (which supplies its own) needs no environment.
  inputs ??= new OperationsService(
    new DynamoDbRecordStore({ client: new DynamoDBClient({}), tableName: requiredEnv(ENV.tableName) }),
    new StepFunctionsEngine(new SFNClient({})),
  ).inputs;
  return inputs;
});
