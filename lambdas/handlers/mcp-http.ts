/**
 * Lambda entry point for the MCP endpoint behind a Function URL (payload v2.0, invoke mode
 * RESPONSE_STREAM). Wiring only: clients and the tool catalog are built once per container,
 * and the shared fetch handler's responses are streamed as they are produced.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { DynamoDbRecordStore } from '../aws/dynamodb-record-store.ts';
import { lazyS3ResultStore } from '../aws/lazy-s3-result-store.ts';
import { streamingFunctionUrlHandler } from '../aws/function-url-adapter.ts';
import { ENV } from '../aws/operations-table.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { StepFunctionsEngine } from '../aws/step-functions-engine.ts';
import { createAsyncMcpApp } from '../app/async-mcp-app.ts';
import { deployedStateMachineArns, STATE_MACHINE_ARN_PREFIX_ENV } from '../tools/state-machine-names.ts';
import { buildToolCatalog } from '../tools/tool-catalog.ts';
import { loadToolFolders } from '../tools/tool-folder.ts';
import { handleToolsFromEnv, limitsFromEnv, requiredEnv } from './environment.ts';

const folders = await loadToolFolders(process.env[ENV.toolsDir] ?? 'state-machines', { checkDefinitions: false });
// Deployed machines have fixed names: one ARN prefix locates them all, however many tools there are.
const catalog = buildToolCatalog(folders, deployedStateMachineArns(requiredEnv(STATE_MACHINE_ARN_PREFIX_ENV)));
const app = createAsyncMcpApp({
  store: new DynamoDbRecordStore({ client: new DynamoDBClient({}), tableName: requiredEnv(ENV.tableName) }),
  engine: new StepFunctionsEngine(new SFNClient({})),
  catalog,
  limits: limitsFromEnv(),
  handleTools: handleToolsFromEnv(),
  results: { store: lazyS3ResultStore(requiredEnv(ENV.resultsBucket)) },
  secretKey: secretsManagerKey(requiredEnv(ENV.secretArn)),
});

/** Lambda entry point, wrapped by `awslambda.streamifyResponse`. */
export const handler = streamingFunctionUrlHandler((request, event) => app.fetch(request, principalOf(event)));

/** With AWS_IAM auth the caller's ARN is the principal; a NONE URL has one shared anonymous principal. */
function principalOf(event: LambdaFunctionURLEvent): string {
  const { authorizer } = event.requestContext as { authorizer?: { iam?: { userArn?: string; callerId?: string } } };
  const iam = authorizer?.iam;
  return iam?.userArn ?? iam?.callerId ?? 'anonymous';
}
