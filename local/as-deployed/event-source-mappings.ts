/**
 * The template's SQS event source mappings, run as Lambda runs them: pollers that receive from
 * the mapped queue with the function's role (the role needs sqs:ReceiveMessage and
 * sqs:DeleteMessage, as in AWS) and invoke the function with each batch.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DeployedStack } from '../assembly/deployed-stack.ts';
import type { IamAuthority } from '../iam/iam-authority.ts';
import type { LocalFunction } from '../lambda/local-function.ts';
import { startSqsEventSource } from '../sqs/sqs-event-source.ts';
import type { FunctionLogs } from './function-logs.ts';

/** Pollers per SQS event source mapping at most, whatever its maximum concurrency. */
const LOCAL_POLLERS = 2;

export interface EventSourceMappingsOptions {
  model: DeployedStack;
  /** The running functions, by logical id. */
  functions: ReadonlyMap<string, LocalFunction>;
  authority: IamAuthority;
  /** The SQS endpoint the pollers call: the IAM gateway, so the function's role is enforced. */
  sqsEndpoint: string;
  logs: FunctionLogs;
  /** The assembly's folder, named in errors. */
  cdkOut: string;
  /** Each started poller's closer is added here as it starts, so a later failure still stops it. */
  closers: Array<() => Promise<void>>;
}

/** Starts the pollers of every enabled mapping; throws when one names a function or queue that is not running. */
export function startEventSourceMappings(options: EventSourceMappingsOptions): void {
  const { model, functions, authority } = options;
  for (const mapping of model.eventSourceMappings.filter((m) => m.enabled)) {
    const fn = model.functions.find((f) => f.logicalId === mapping.functionLogicalId);
    const local = functions.get(mapping.functionLogicalId);
    const queue = model.queues.find((q) => q.arn === mapping.queueArn);
    if (!fn || !local || !queue) throw new Error(`${options.cdkOut}: event source mapping ${mapping.logicalId} names a function or queue that is not running`);
    const client = new SQSClient({
      region: model.region,
      endpoint: options.sqsEndpoint,
      credentials: authority.credentialsFor(fn.roleArn, fn.name),
      maxAttempts: 1,
    });
    const sink = options.logs.sink(mapping.logicalId);
    const source = startSqsEventSource({
      client,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: model.region,
      batchSize: mapping.batchSize,
      // Lambda scales pollers up to the mapping's maximum; a few here, on a laptop's cores.
      maxConcurrency: Math.min(mapping.maximumConcurrency ?? LOCAL_POLLERS, LOCAL_POLLERS),
      reportBatchItemFailures: mapping.reportBatchItemFailures,
      invoke: (event) => local.invoke(event),
      logger: { warn: (line) => sink(line) },
    });
    options.closers.push(async () => {
      await source.close();
      client.destroy();
    });
  }
}
