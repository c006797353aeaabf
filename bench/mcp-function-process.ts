/**
 * The MCP function alone, in a process of its own, for the starts bench: the app the MCP
 * function serves (the same record store with the hot read and the start's hot writes, Step
 * Functions engine with the hot StartExecution, events stores and HTTP edge), its SDK clients
 * pointed at another process's local stack (local-server-process.ts `--starts`) for DynamoDB
 * (dynalite), Step Functions (the facade), Lambda (the durable service) and S3. So this process's CPU is what the MCP function spends
 * in AWS: request handling and the SDK clients' serialisation, signing and HTTP; the facade
 * running the execution, status sync and the local workers stay in the stack's process.
 *
 * Left out as they are not the function's: the local stack's DynamoDB size-limit check (a
 * stand-in for DynamoDB's own) and the status signal that wakes listen streams in process
 * (status sync is another function in AWS). The secret key is this process's own, as the
 * stack's status sync is not asked to agree with it (no webhook is subscribed).
 *
 * Argument: the stack's endpoints as JSON (`StackEndpoints`). Reports `{ url }` over IPC;
 * answers `{ cpu: true }` with its clocks and closes on `{ close: true }` or a closed channel.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { pathToFileURL } from 'node:url';
import { createAsyncMcpApp } from '../lambdas/app/async-mcp-app.ts';
import { AWS_CLIENT_CONFIG } from '../lambdas/aws/aws-client-config.ts';
import { DurableFunctionEngine } from '../lambdas/aws/durable-function-engine.ts';
import { DynamoDbEventHandover } from '../lambdas/aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../lambdas/aws/dynamodb-event-log.ts';
import { DynamoDbRecordStore } from '../lambdas/aws/dynamodb-record-store.ts';
import { DynamoDbWebhookSubscriptions } from '../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { HotDynamoDbWrites } from '../lambdas/aws/hot-dynamodb-writes.ts';
import { HotGetItem } from '../lambdas/aws/hot-get-item.ts';
import { HotStartExecution } from '../lambdas/aws/hot-start-execution.ts';
import { RoutingWorkflowEngine } from '../lambdas/aws/routing-workflow-engine.ts';
import { S3ResultStore } from '../lambdas/aws/s3-result-store.ts';
import { StepFunctionsEngine } from '../lambdas/aws/step-functions-engine.ts';
import { withRequestContext } from '../lambdas/observability/request-context.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { buildToolCatalog } from '../lambdas/tools/tool-catalog.ts';
import { loadToolFolders } from '../lambdas/tools/tool-folder.ts';
import { principalOf } from '../local/local-principal.ts';
import { serveFetch } from '../local/node-http-server.ts';
import { LOCAL_ACCOUNT_ID, LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/local-scope.ts';
import { localSecretKey } from '../local/secretsmanager/local-secret.ts';
import { stateMachineArn } from '../local/stepfunctions/sfn-facade-arns.ts';
import { answerBenchParent } from './bench-child.ts';

/** Where a local stack's AWS stand-ins listen (local-server-process.ts reports them with `--starts`). */
export interface StackEndpoints {
  dynamodb: string;
  tableName: string;
  stepFunctions: string;
  /** The local durable service, when a tool is a durable function. */
  lambda?: string;
  s3: string;
  bucketName: string;
}

/** What the process reports once it serves. */
export interface McpFunctionReady {
  url: string;
}

const TOOLS_DIR = 'state-machines';

async function serveMcpFunction(stack: StackEndpoints): Promise<{ url: URL; close(): Promise<void> }> {
  const scope = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...AWS_CLIENT_CONFIG, ...scope, endpoint: stack.dynamodb });
  const table = { client: dynamodb, tableName: stack.tableName };
  // As the local stack's: StartSyncExecution's `sync-` host prefix is not served by the facade.
  const sfn = new SFNClient({ ...AWS_CLIENT_CONFIG, ...scope, endpoint: stack.stepFunctions, disableHostPrefix: true });
  const lambda = stack.lambda ? new LambdaClient({ ...AWS_CLIENT_CONFIG, ...scope, endpoint: stack.lambda }) : undefined;
  const s3 = new S3Client({
    region: LOCAL_REGION,
    endpoint: stack.s3,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const arnScope = { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT_ID };
  const functionArnPrefix = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:`;
  const folders = await loadToolFolders(TOOLS_DIR);
  const catalog = buildToolCatalog(folders, (name, folder) => (folder.durable ? `${functionArnPrefix}${name}` : stateMachineArn(arnScope, name)));
  // A start's calls as the MCP function sends them (lazy-dynamodb-record-store.ts, lazy-step-functions-engine.ts): over the hot wire.
  const stepFunctions = new StepFunctionsEngine(sfn, new HotStartExecution(sfn));
  const app = createAsyncMcpApp({
    store: new DynamoDbRecordStore({ ...table, operationReads: new HotGetItem(dynamodb), writes: new HotDynamoDbWrites(dynamodb) }),
    engine: lambda ? new RoutingWorkflowEngine(stepFunctions, new DurableFunctionEngine(lambda)) : stepFunctions,
    catalog,
    // The starts bench leaves every operation it starts waiting, far past the per-principal default.
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: 1_000_000 },
    results: { store: new S3ResultStore({ client: s3, bucketName: stack.bucketName }) },
    secretKey: localSecretKey(),
    allowedHostnames: localhostAllowedHostnames(),
    events: {
      log: new DynamoDbEventLog(table),
      subscriptions: new DynamoDbWebhookSubscriptions(table),
      handover: new DynamoDbEventHandover(table),
    },
  });
  let requests = 0;
  const http = await serveFetch(
    (request) => withRequestContext({ function_request_id: `local-${++requests}` }, () => app.fetch(request, principalOf(request))),
    {
      host: '127.0.0.1',
      port: 0,
      path: '/mcp',
    },
  );
  return {
    url: http.url,
    close: async () => {
      await http.close();
      for (const client of [dynamodb, sfn, lambda, s3]) client?.destroy();
    },
  };
}

if (process.send && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await serveMcpFunction(JSON.parse(process.argv[2] ?? '{}') as StackEndpoints);
  const stop = () => void server.close().then(() => process.exit(0));
  answerBenchParent(stop);
  process.send({ url: server.url.href } satisfies McpFunctionReady);
}
