/**
 * A Lambda event source mapping for an SQS queue, locally: pollers (as many as the mapping's
 * maximum concurrency) long-poll the queue with the function role's own SQS client, so the role
 * needs what AWS needs it to have (sqs:ReceiveMessage, sqs:DeleteMessage), and invoke the
 * function with the SQS event Lambda builds. A function error leaves the whole batch on the queue
 * (it comes back after its visibility timeout); with ReportBatchItemFailures, the items the
 * function names stay and the rest are deleted, and an answer naming no message of the batch
 * fails the whole batch, as Lambda treats it.
 */
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

export interface SqsEventSourceOptions {
  /** The function role's client, pointed at the IAM gateway in front of the local SQS. */
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /** @default 10 */
  readonly batchSize?: number;
  /** Pollers, each with one invocation at a time (ScalingConfig.MaximumConcurrency). @default 2 */
  readonly maxConcurrency?: number;
  /** FunctionResponseTypes includes ReportBatchItemFailures. */
  readonly reportBatchItemFailures: boolean;
  /** Invokes the function; throws for a function error. */
  readonly invoke: (event: SqsEvent) => Promise<unknown>;
  /** Where poll and delete failures are reported. @default console */
  readonly logger?: Pick<Console, 'warn'>;
}

/** The event Lambda invokes an SQS-triggered function with. */
export interface SqsEvent {
  Records: SqsEventRecord[];
}

export interface SqsEventRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: Record<string, string>;
  messageAttributes: Record<string, never>;
  md5OfBody: string;
  eventSource: 'aws:sqs';
  eventSourceARN: string;
  awsRegion: string;
}

export interface SqsEventSource {
  /** Resolves once every batch received so far has been handled. */
  idle(): Promise<void>;
  /** Stops polling; waits for the invocations under way. */
  close(): Promise<void>;
}

/** Starts the pollers. */
export function startSqsEventSource(options: SqsEventSourceOptions): SqsEventSource {
  const stop = new AbortController();
  const logger = options.logger ?? console;
  const inFlight = new Set<Promise<void>>();
  const pollers = Array.from({ length: Math.max(1, options.maxConcurrency ?? 2) }, () => poll());

  async function poll(): Promise<void> {
    while (!stop.signal.aborted) {
      let messages: Message[];
      try {
        const out = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: 20,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: stop.signal },
        );
        messages = out.Messages ?? [];
      } catch (error) {
        if (stop.signal.aborted) return;
        // An AccessDenied here is the role missing sqs:ReceiveMessage: Lambda would disable the mapping's progress the same way.
        logger.warn(`event source ${options.queueArn}: ReceiveMessage failed: ${describe(error)}`);
        await pause(1000, stop.signal);
        continue;
      }
      if (messages.length === 0) continue;
      const handled = handle(messages);
      inFlight.add(handled);
      await handled.finally(() => inFlight.delete(handled));
    }
  }

  async function handle(messages: Message[]): Promise<void> {
    const records = messages.map((message) => recordOf(message, options));
    let keep: Set<string>;
    try {
      keep = kept(await options.invoke({ Records: records }), records, options.reportBatchItemFailures);
    } catch {
      // A function error: the whole batch stays, and comes back after the visibility timeout.
      return;
    }
    const done = records.filter((record) => !keep.has(record.messageId));
    for (let start = 0; start < done.length; start += 10) {
      const entries = done.slice(start, start + 10).map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle }));
      try {
        const out = await options.client.send(new DeleteMessageBatchCommand({ QueueUrl: options.queueUrl, Entries: entries }));
        for (const failed of out.Failed ?? []) logger.warn(`event source ${options.queueArn}: DeleteMessage failed: ${failed.Code}`);
      } catch (error) {
        logger.warn(`event source ${options.queueArn}: DeleteMessageBatch failed: ${describe(error)}`);
      }
    }
  }

  return {
    idle: async () => void (await Promise.all([...inFlight])),
    close: async () => {
      stop.abort();
      await Promise.all(pollers);
    },
  };
}

/** The message ids to leave on the queue, from the function's answer. */
function kept(result: unknown, records: readonly SqsEventRecord[], reportBatchItemFailures: boolean): Set<string> {
  const all = new Set(records.map((record) => record.messageId));
  if (!reportBatchItemFailures) return new Set();
  const failures = (result as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return all;
  const ids = failures.map((failure) => (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier);
  // Lambda: an empty, missing or unknown itemIdentifier fails the whole batch.
  if (ids.some((id) => typeof id !== 'string' || !all.has(id))) return all;
  return new Set(ids as string[]);
}

function recordOf(message: Message, options: SqsEventSourceOptions): SqsEventRecord {
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ...(message.Attributes as Record<string, string> | undefined) },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: options.queueArn,
    awsRegion: options.region,
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
