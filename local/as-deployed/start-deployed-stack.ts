/**
 * Runs what `cdk deploy` would deploy, from the cloud assembly alone: the template's table in
 * dynalite (with a TTL sweeper on its TTL attribute), its bucket in s3rver, its secret, each
 * function's bundled asset in a sandbox of its own with its role's credentials, each state
 * machine's resolved definition in the Step Functions facade under its role, the event rule with
 * its retry policy and dead-letter queue, the SQS queues with their event source mappings
 * (pollers that invoke the function under its role), the durable functions' executions in the
 * local durable service (each invocation in the function's sandbox, its status changes through
 * the event rule), and the Function URL. Every AWS call a function makes goes through an IAM
 * gateway that enforces the caller's role; every Task a machine runs is authorized as the
 * machine's role.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { loadDeployedStack } from '../assembly/build-deployed-stack.ts';
import type { DeployedFunction, DeployedStack } from '../assembly/deployed-stack.ts';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { startLocalDurableService } from '../durable/index.ts';
import { startLocalDynamo } from '../dynamodb/dynamo-local.ts';
import { startTtlSweeper, type TtlSweeperOptions } from '../dynamodb/dynamo-ttl-sweeper.ts';
import { IamAuthority } from '../iam/iam-authority.ts';
import { startIamGateway } from '../iam/iam-gateway.ts';
import { authorizeTask } from '../iam/task-authorization.ts';
import { LambdaFunctionError, startLocalFunction, type LocalFunction } from '../lambda/local-function.ts';
import { serveFunctionUrl } from '../lambda/function-url-server.ts';
import { startLocalResults } from '../s3/local-results.ts';
import { startLocalSecretsManager } from '../secretsmanager/local-secrets-manager.ts';
import { startPutEventsEndpoint, type EventBridgeEvent } from '../events/put-events-endpoint.ts';
import { type LocalSqs, startLocalSqs } from '../sqs/local-sqs.ts';
import { TaskError } from '../stepfunctions/sfn-facade-errors.ts';
import { startSfnFacade, type TaskAuthorization } from '../stepfunctions/sfn-facade.ts';
import { createDeadLetterQueue, type DeadLetterQueue } from './dead-letter-queue.ts';
import { replayDeadLetters } from './dead-letter-replay.ts';
import { callbackOwners, durableFunctionsOf, sandboxedDurableHandlers } from './durable-functions.ts';
import { createRuleDelivery, type RuleDelivery } from './event-rule-delivery.ts';
import { startEventSourceMappings } from './event-source-mappings.ts';
import { createFunctionLogs } from './function-logs.ts';
import { rebindingGuard } from './rebinding-guard.ts';

export const DEFAULT_HOST = '127.0.0.1';
/** Under the data directory: which assembly ran on it last. */
export const ASSEMBLY_RECORD = 'assembly.json';
export const DEFAULT_PORT = 3000;
/** s3rver checks signatures against its own fixed key pair; the gateway re-signs with it. */
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface DeployedStackOptions {
  /** The cloud assembly `cdk synth -o DIR` wrote. */
  cdkOut: string;
  /** Keep data (table, bucket, secret, executions, dead letters, logs) here across restarts; in memory when absent. */
  dataDir?: string;
  /** The address the Function URL (the MCP endpoint) binds; every other endpoint listens on 127.0.0.1. @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 3000 */
  port?: number;
  /** Scales Wait states and the event rule's retry backoff; 1 = real time. */
  waitTimeScale?: number;
  /** How late expired records are deleted. @default lagSeconds 60, intervalMs 10000 */
  ttl?: Pick<TtlSweeperOptions, 'lagSeconds' | 'intervalMs'>;
  /** Where prefixed function log lines go. @default stdout */
  log?: (line: string) => void;
  /** Where the stack's own notices go: IAM gateway refusals, event rule retries and dead letters. @default console */
  notices?: Pick<Console, 'warn' | 'error'>;
  /** Each event a function put on the default bus (PutEvents through its IAM gateway). */
  onEvent?: (event: EventBridgeEvent) => void;
  /** Timeouts in seconds, by function logical id, in place of the template's (a test's short invocations). */
  functionTimeoutSeconds?: Readonly<Record<string, number>>;
}

export interface DeployedLocalStack {
  /** The MCP endpoint: the Function URL with path /mcp. */
  url: URL;
  model: DeployedStack;
  authority: IamAuthority;
  dynamo: { endpoint: string; tableName: string; client: DynamoDBClient };
  results: { endpoint: string; bucketName: string };
  /** The facade's own endpoint (no IAM), for inspecting executions. */
  sfnEndpoint: string;
  /** The local durable service's own endpoint (no IAM), for inspecting durable executions. */
  durableEndpoint: string;
  /** The IAM-enforcing endpoints the functions are given. */
  gateways: { dynamodb: string; states: string; s3: string; secretsmanager: string; events: string; sqs: string; lambda: string };
  /** The template's SQS queues (no IAM in front of this one), for inspecting them. */
  sqs: LocalSqs;
  /** The running functions, by logical id. */
  functions: Map<string, LocalFunction>;
  deadLetterQueues: DeadLetterQueue[];
  /** Sends every dead letter through its rule's target again; removes those that succeed. */
  replayDeadLetters(): Promise<{ replayed: number; failed: number }>;
  /** Resolves when every event published so far has been delivered or dead-lettered. */
  drainEvents(): Promise<void>;
  close(): Promise<void>;
}

export async function startDeployedStack(options: DeployedStackOptions): Promise<DeployedLocalStack> {
  const model = withTimeouts(loadDeployedStack(resolve(options.cdkOut)), options.functionTimeoutSeconds ?? {});
  const scope = { region: model.region, accountId: model.accountId };
  const host = options.host ?? DEFAULT_HOST;
  const data = options.dataDir ? resolve(options.dataDir) : undefined;
  const under = (folder: string) => (data ? { dataDir: resolve(data, folder) } : {});
  const authority = new IamAuthority(model.roles, { ...scope, permissions: model.permissions });
  const closers: Array<() => Promise<void>> = [];
  const logs = createFunctionLogs({ ...(data ? { dataDir: data } : {}), ...(options.log ? { console: options.log } : {}) });
  const notices = options.notices ?? console;
  closers.push(() => logs.close());
  try {
    const { table } = model;
    const dynamo = await startLocalDynamo({
      ...under('dynamodb'),
      tableName: table.name,
      schema: {
        KeySchema: table.keySchema,
        AttributeDefinitions: table.attributeDefinitions,
        // Only what CreateTable takes: a template's GSI may carry CloudFormation-only fields.
        ...(table.globalSecondaryIndexes.length > 0
          ? { GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((i) => ({ IndexName: i.IndexName, KeySchema: i.KeySchema, Projection: i.Projection })) }
          : {}),
      },
    });
    closers.push(() => dynamo.close());
    if (table.ttlAttribute) {
      const sweeper = startTtlSweeper({ client: dynamo.client, tableName: table.name, attribute: table.ttlAttribute, ...options.ttl });
      closers.push(() => sweeper.close());
    }
    // The AWS endpoints and their IAM gateways are the server's own parts: they listen on
    // 127.0.0.1 whatever `host` says, which only the Function URL (the MCP endpoint) binds.
    const results = await startLocalResults({ ...under('results'), bucketName: model.bucket.name });
    closers.push(() => results.close());
    const secrets = await startLocalSecretsManager({
      secrets: [
        {
          name: model.secret.name,
          arn: model.secret.arn,
          ...(model.secret.generateSecretString ? { generateSecretString: model.secret.generateSecretString } : {}),
        },
      ],
      ...(data ? { dataDir: data } : {}),
    });
    closers.push(() => secrets.close());
    // The operation events status sync puts (the default bus; a bus of the template's own is not run).
    const events = await startPutEventsEndpoint({ ...scope, onEvent: (event) => options.onEvent?.(event) });
    closers.push(() => events.close());
    // Every queue of the template; the event rule's dead-letter queue keeps its letters as files too (dead-letter-queue.ts).
    const sqs = await startLocalSqs({
      ...scope,
      queues: model.queues.map((queue) => {
        const deadLetters = queue.redrive && model.queues.find((other) => other.arn === queue.redrive?.deadLetterTargetArn);
        if (queue.redrive && !deadLetters)
          throw new Error(`${options.cdkOut}: queue ${queue.logicalId} redrives to ${queue.redrive.deadLetterTargetArn}, not a queue of the stack`);
        return {
          name: queue.name,
          ...(queue.visibilityTimeoutSeconds === undefined ? {} : { visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds }),
          ...(queue.messageRetentionSeconds === undefined ? {} : { messageRetentionSeconds: queue.messageRetentionSeconds }),
          ...(queue.redrive && deadLetters ? { redrive: { deadLetterQueueName: deadLetters.name, maxReceiveCount: queue.redrive.maxReceiveCount } } : {}),
        };
      }),
    });
    closers.push(() => sqs.close());

    const functions = new Map<string, LocalFunction>();
    const functionFor = (arnOrName: string): { fn: DeployedFunction; local: LocalFunction } => {
      const version = model.versions.find((v) => v.arn === arnOrName);
      const unqualified = arnOrName.startsWith('arn:') ? arnOrName.split(':').slice(0, 7).join(':') : undefined;
      const fn = model.functions.find((f) => (version ? f.logicalId === version.functionLogicalId : f.arn === unqualified || f.name === arnOrName));
      const local = fn && functions.get(fn.logicalId);
      if (!fn || !local) throw new TaskError('Lambda.ResourceNotFoundException', `Function not found: ${arnOrName}`);
      return { fn, local };
    };
    // As Step Functions reports a function error: Error = errorType, Cause = the runtime's payload.
    const invokeFunction = async (arnOrName: string, payload: unknown) => {
      try {
        return await functionFor(arnOrName).local.invoke(payload);
      } catch (error) {
        if (error instanceof LambdaFunctionError) throw new TaskError(error.payload.errorType, JSON.stringify(error.payload));
        throw error;
      }
    };

    const deadLetterQueues = model.queues.map((queue) => createDeadLetterQueue(queue, data));
    const rules: RuleDelivery[] = model.rules.map((rule) =>
      createRuleDelivery({
        rule,
        invoke: (arn, event) => functionFor(arn).local.invoke(event),
        deadLetterQueues: new Map(deadLetterQueues.map((q) => [q.queue.arn, q])),
        logger: notices,
        ...(options.waitTimeScale === undefined ? {} : { waitTimeScale: options.waitTimeScale }),
        // EventBridge needs the function's resource policy (AWS::Lambda::Permission) to allow it.
        mayInvoke: async (arn) =>
          (
            await authority.authorize({
              principalArn: 'events.amazonaws.com',
              action: 'lambda:InvokeFunction',
              resource: arn,
              context: { 'aws:SourceArn': rule.arn, 'aws:SourceAccount': model.accountId },
            })
          ).allowed,
      }),
    );
    closers.push(async () => void (await Promise.all(rules.map((rule) => rule.close()))));

    const facade = await startSfnFacade({
      stateMachines: model.stateMachines.map((machine) => ({
        name: machine.name,
        definitionText: machine.definition,
        workflowType: machine.type,
        roleArn: machine.roleArn,
      })),
      resolveWorker: (worker) => {
        throw new Error(`a deployed definition names \${Worker_${worker}}: DefinitionSubstitutions should have replaced it`);
      },
      invokeFunction,
      authorize: (request) => authorizeMachineTask(authority, request),
      onStatusChange: (event) => {
        for (const rule of rules) rule.publish(event);
      },
      ...scope,
      ...under('stepfunctions'),
      ...(options.waitTimeScale === undefined ? {} : { waitTimeScale: options.waitTimeScale }),
    });
    closers.push(() => facade.close());

    // Durable functions: Lambda keeps their executions and invokes them; their status changes
    // go to the event rules as Step Functions' do.
    const durableFunctions = durableFunctionsOf(model);
    if (durableFunctions.length > 0 && !model.rules.some((rule) => rule.durableStatusChanges))
      notices.warn(`${options.cdkOut}: no event rule selects durable execution status changes; durable tools end only when polled`);
    const durable = await startLocalDurableService({
      functions: sandboxedDurableHandlers(durableFunctions, functions),
      onStatusChange: (event) => {
        for (const rule of rules) rule.publish(event);
      },
      ...scope,
      ...under('durable'),
    });
    const closeDurable = once(() => durable.close());
    closers.push(closeDurable);

    const gateway = async (service: 'dynamodb' | 'states' | 's3' | 'secretsmanager' | 'events' | 'sqs' | 'lambda', upstream: string) => {
      const started = await startIamGateway({
        service,
        upstream,
        authority,
        logger: notices,
        ...(service === 's3' ? { upstreamCredentials: S3RVER_CREDENTIALS } : {}),
        resolve: {
          secretArn: (id) => secrets.secretArn(id),
          stateMachineOfTaskToken: (token) => facade.stateMachineOfTaskToken(token),
          partitionKeyOf: (tableName) => (tableName === table.name ? table.keySchema.find((key) => key.KeyType === 'HASH')?.AttributeName : undefined),
          durableExecutionOfCallback: callbackOwners(durable.service, durableFunctions),
        },
      });
      closers.push(() => started.close());
      return started.endpoint;
    };
    const gateways = {
      dynamodb: await gateway('dynamodb', dynamo.endpoint),
      states: await gateway('states', facade.endpoint),
      s3: await gateway('s3', results.endpoint),
      secretsmanager: await gateway('secretsmanager', secrets.endpoint),
      events: await gateway('events', events.endpoint),
      sqs: await gateway('sqs', sqs.endpoint),
      lambda: await gateway('lambda', durable.endpoint),
    };

    for (const fn of model.functions) {
      const credentials = authority.credentialsFor(fn.roleArn, fn.name);
      const local = await startLocalFunction({
        fn,
        runtimeEnvironment: {
          AWS_ACCESS_KEY_ID: credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
          AWS_SESSION_TOKEN: credentials.sessionToken,
          AWS_REGION: model.region,
          AWS_DEFAULT_REGION: model.region,
          // The SDK v3 reads AWS_ENDPOINT_URL_<SERVICE ID>; an IP endpoint makes S3 path-style on its own.
          AWS_ENDPOINT_URL_DYNAMODB: gateways.dynamodb,
          AWS_ENDPOINT_URL_SFN: gateways.states,
          AWS_ENDPOINT_URL_S3: gateways.s3,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: gateways.secretsmanager,
          AWS_ENDPOINT_URL_EVENTBRIDGE: gateways.events,
          AWS_ENDPOINT_URL_SQS: gateways.sqs,
          // Lambda's durable calls (Invoke, the executions, callbacks, the SDK's checkpoints) go to the local durable service.
          AWS_ENDPOINT_URL_LAMBDA: gateways.lambda,
          // Webhook callbacks go to loopback receivers here, as with `npm start`; the template never sets it, so AWS stays https-only.
          [ENV.eventsLoopbackCallbacks]: '1',
        },
        onLog: logs.sink(fn.logicalId),
      });
      functions.set(fn.logicalId, local);
      closers.push(() => local.close());
    }
    // Lambda polls each mapped queue with the function's role.
    startEventSourceMappings({ model, functions, authority, sqsEndpoint: gateways.sqs, logs, cdkOut: options.cdkOut, closers });

    // Stopping: executions stop without an outcome first (as a stopped process would, see the
    // facade; a durable execution keeps its state and no invocation starts), then pending
    // deliveries settle, and only then do the functions go.
    closers.push(async () => void (await Promise.all(rules.map((rule) => rule.close()))));
    closers.push(() => facade.close());
    closers.push(closeDurable);

    if (!model.functionUrl) throw new Error(`${options.cdkOut}: the stack has no AWS::Lambda::Url to serve MCP on`);
    const urlConfig = model.functionUrl;
    const target = model.functions.find((f) => f.logicalId === urlConfig.targetFunctionLogicalId);
    const targetFn = target && functions.get(target.logicalId);
    if (!target || !targetFn)
      throw new Error(`${options.cdkOut}: the AWS::Lambda::Url targets ${urlConfig.targetFunctionLogicalId}, not a function of the stack`);
    const served = await serveFunctionUrl({
      url: urlConfig,
      fn: targetFn,
      functionArn: target.arn,
      host,
      port: options.port ?? DEFAULT_PORT,
      path: '/mcp',
      ...(urlConfig.authType === 'AWS_IAM' ? { iam: authority } : {}),
      onLog: logs.sink(urlConfig.logicalId),
      // A foreign Host or Origin is refused with 403, as npm start refuses it (DNS rebinding).
      screen: rebindingGuard(host),
    });
    closers.push(() => served.close());
    // The replay command finds the assembly these dead letters belong to here.
    if (data) await writeFile(resolve(data, ASSEMBLY_RECORD), `${JSON.stringify({ cdkOut: resolve(options.cdkOut) }, null, 2)}\n`);

    return {
      url: served.url,
      model,
      authority,
      dynamo: { endpoint: dynamo.endpoint, tableName: table.name, client: dynamo.client },
      results: { endpoint: results.endpoint, bucketName: results.bucketName },
      sfnEndpoint: facade.endpoint,
      durableEndpoint: durable.endpoint,
      gateways,
      sqs,
      functions,
      deadLetterQueues,
      replayDeadLetters: () => replayDeadLetters(deadLetterQueues, rules, model),
      drainEvents: async () => void (await Promise.all(rules.map((rule) => rule.drain()))),
      close: () => closeAll(closers),
    };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

/** Step Functions checks the machine's role before each Task call; a denial fails the Task as AWS records it. */
async function authorizeMachineTask(authority: IamAuthority, request: TaskAuthorization): Promise<void> {
  const denied = await authorizeTask(authority, request);
  if (denied) throw new TaskError(denied.error, denied.cause);
}

/** `close` run once, however many closers name it. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const close of closers.splice(0).reverse()) {
    await close().catch(() => undefined);
  }
}

/** The model with these functions' timeouts: the sandbox's deadline and the context's remaining time follow them. */
function withTimeouts(model: DeployedStack, timeouts: Readonly<Record<string, number>>): DeployedStack {
  return { ...model, functions: model.functions.map((fn) => ({ ...fn, timeoutSeconds: timeouts[fn.logicalId] ?? fn.timeoutSeconds })) };
}
