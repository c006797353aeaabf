/**
 * A minimal SQS endpoint for the as-deployed stack: standard queues in memory, spoken to in the
 * AWS JSON 1.0 protocol (`X-Amz-Target: AmazonSQS.<Operation>`) that the unmodified SQSClient
 * uses: SendMessage(Batch), ReceiveMessage (with long polls), DeleteMessage(Batch),
 * ChangeMessageVisibility(Batch), GetQueueUrl and GetQueueAttributes. It listens on 127.0.0.1
 * only and authenticates nothing: the IAM gateway in front of it checks each caller's role.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  MAX_VISIBILITY_TIMEOUT_SECONDS,
  MAX_WAIT_SECONDS,
  type ReceivedMessage,
  SqsError,
  SqsQueues,
  type SqsQueue,
  type SqsQueueConfig,
} from './sqs-queues.ts';

export interface LocalSqsOptions {
  readonly region: string;
  readonly accountId: string;
  readonly queues: readonly SqsQueueConfig[];
  /** @default 0 (a free port) */
  readonly port?: number;
}

export interface LocalSqs {
  /** The URL to pass as the SQS client's `endpoint` (or to the IAM gateway as its upstream). */
  readonly endpoint: string;
  readonly queues: SqsQueues;
  /** A queue's URL on this endpoint. */
  queueUrl(name: string): string;
  close(): Promise<void>;
}

/** SQS's limits that a caller can run into. */
const MAX_BATCH_ENTRIES = 10;
const MAX_MESSAGE_BYTES = 256 * 1024;
const MAX_REQUEST_BYTES = MAX_BATCH_ENTRIES * MAX_MESSAGE_BYTES + 64 * 1024;
const LOOPBACK = '127.0.0.1';
/** The characters SQS takes in a message body. */
const VALID_BODY = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

type Body = Record<string, unknown>;

/** The errors whose query-protocol code SQS prefixes with `AWS.SimpleQueueService.`. */
const QUERY_CODES = new Set([
  'QueueDoesNotExist',
  'MessageNotInflight',
  'TooManyEntriesInBatchRequest',
  'EmptyBatchRequest',
  'BatchEntryIdsNotDistinct',
  'InvalidBatchEntryId',
  'BatchRequestTooLong',
  'UnsupportedOperation',
]);

/** Starts the endpoint on a loopback port. */
export async function startLocalSqs(options: LocalSqsOptions): Promise<LocalSqs> {
  const queues = new SqsQueues(options.queues, options);
  const closing = new AbortController();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof SqsError) return sendError(res, error.status, error.code, error.message);
      sendError(res, 500, 'InternalFailure', error instanceof Error ? error.message : String(error));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method !== 'POST' || !target.startsWith('AmazonSQS.'))
      throw new SqsError('UnknownOperationException', `The local SQS speaks the AWS JSON protocol only, not ${req.method} ${target}.`);
    const text = await readBody(req);
    let body: Body;
    try {
      body = asObject(JSON.parse(text));
    } catch {
      throw new SqsError('SerializationException', 'The request body is not JSON.');
    }
    const operation = target.slice('AmazonSQS.'.length);
    // A caller that goes away mid long poll must not take messages into flight that nobody will read.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    send(res, await run(operation, body, senderOf(req), AbortSignal.any([gone.signal, closing.signal])));
  }

  async function run(operation: string, body: Body, senderId: string, signal: AbortSignal): Promise<Body> {
    switch (operation) {
      case 'SendMessage': {
        const queue = queues.byUrl(body.QueueUrl);
        refuseAttributes(body);
        const sent = queue.send(checkedBody(body.MessageBody), { senderId, ...delayOf(body) });
        return { MessageId: sent.messageId, MD5OfMessageBody: sent.md5OfBody };
      }
      case 'SendMessageBatch': {
        const queue = queues.byUrl(body.QueueUrl);
        const entries = batchOf(body.Entries);
        const total = entries.reduce((sum, entry) => sum + Buffer.byteLength(String(entry.MessageBody ?? ''), 'utf8'), 0);
        if (total > MAX_MESSAGE_BYTES) throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${MAX_MESSAGE_BYTES} bytes.`);
        return perEntry(entries, (entry) => {
          refuseAttributes(entry);
          const sent = queue.send(checkedBody(entry.MessageBody), { senderId, ...delayOf(entry) });
          return { MessageId: sent.messageId, MD5OfMessageBody: sent.md5OfBody };
        });
      }
      case 'ReceiveMessage': {
        const queue = queues.byUrl(body.QueueUrl);
        const max = integerIn(body.MaxNumberOfMessages, 1, MAX_BATCH_ENTRIES, 'MaxNumberOfMessages') ?? 1;
        const visibility = integerIn(body.VisibilityTimeout, 0, MAX_VISIBILITY_TIMEOUT_SECONDS, 'VisibilityTimeout');
        const waitSeconds = integerIn(body.WaitTimeSeconds, 0, MAX_WAIT_SECONDS, 'WaitTimeSeconds') ?? queue.config.receiveMessageWaitTimeSeconds ?? 0;
        const received = await queue.receive({ max, waitSeconds, signal, ...(visibility === undefined ? {} : { visibilityTimeoutSeconds: visibility }) });
        const wanted = new Set([...stringList(body.AttributeNames), ...stringList(body.MessageSystemAttributeNames)]);
        return received.length === 0 ? {} : { Messages: received.map((message) => messageOf(message, wanted)) };
      }
      case 'DeleteMessage':
        queues.byUrl(body.QueueUrl).delete(receiptHandleOf(body));
        return {};
      case 'DeleteMessageBatch': {
        const queue = queues.byUrl(body.QueueUrl);
        return perEntry(batchOf(body.Entries), (entry) => {
          queue.delete(receiptHandleOf(entry));
          return {};
        });
      }
      case 'ChangeMessageVisibility': {
        const queue = queues.byUrl(body.QueueUrl);
        queue.changeVisibility(receiptHandleOf(body), visibilityOf(body));
        return {};
      }
      case 'ChangeMessageVisibilityBatch': {
        const queue = queues.byUrl(body.QueueUrl);
        return perEntry(batchOf(body.Entries), (entry) => {
          queue.changeVisibility(receiptHandleOf(entry), visibilityOf(entry));
          return {};
        });
      }
      case 'GetQueueUrl': {
        const queue = typeof body.QueueName === 'string' ? queues.get(body.QueueName) : undefined;
        if (!queue) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
        return { QueueUrl: queueUrl(queue.name) };
      }
      case 'GetQueueAttributes':
        return { Attributes: attributesOf(queues.byUrl(body.QueueUrl), new Set(stringList(body.AttributeNames))) };
      default:
        throw new SqsError('UnsupportedOperation', `The local SQS does not serve ${operation}.`);
    }
  }

  function attributesOf(queue: SqsQueue, wanted: ReadonlySet<string>): Record<string, string> {
    const counts = queue.counts();
    const redrive = queue.config.redrive;
    const deadLetters = redrive ? queues.get(redrive.deadLetterQueueName) : undefined;
    const all: Record<string, string> = {
      QueueArn: queue.arn,
      ApproximateNumberOfMessages: String(counts.visible),
      ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
      ApproximateNumberOfMessagesDelayed: String(counts.delayed),
      VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
      MessageRetentionPeriod: String(queue.config.messageRetentionSeconds ?? 345_600),
      DelaySeconds: String(queue.config.delaySeconds ?? 0),
      ReceiveMessageWaitTimeSeconds: String(queue.config.receiveMessageWaitTimeSeconds ?? 0),
      MaximumMessageSize: String(MAX_MESSAGE_BYTES),
      ...(redrive && deadLetters ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn, maxReceiveCount: redrive.maxReceiveCount }) } : {}),
    };
    if (wanted.has('All')) return all;
    return Object.fromEntries(Object.entries(all).filter(([name]) => wanted.has(name)));
  }

  function queueUrl(name: string): string {
    return `${endpoint}/${options.accountId}/${name}`;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, LOOPBACK, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${LOOPBACK}:${port}`;
  return {
    endpoint,
    queues,
    queueUrl,
    close: () =>
      new Promise((resolve) => {
        // Long polls answer (empty) before their connections go.
        closing.abort();
        queues.close();
        server.close(() => resolve());
        setImmediate(() => server.closeAllConnections());
      }),
  };
}

/** One result per entry, failures beside successes, as SQS's batch calls answer. */
function perEntry(entries: Body[], act: (entry: Body) => Body): Body {
  const successful: Body[] = [];
  const failed: Body[] = [];
  for (const entry of entries) {
    try {
      successful.push({ Id: entry.Id, ...act(entry) });
    } catch (error) {
      if (!(error instanceof SqsError)) throw error;
      failed.push({ Id: entry.Id, SenderFault: true, Code: error.code, Message: error.message });
    }
  }
  return { Successful: successful, Failed: failed };
}

function batchOf(value: unknown): Body[] {
  if (!Array.isArray(value) || value.length === 0) throw new SqsError('EmptyBatchRequest', 'There should be at least one entry in the request.');
  if (value.length > MAX_BATCH_ENTRIES)
    throw new SqsError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${value.length}.`);
  const entries = value.map(asObject);
  const ids = new Set<string>();
  for (const entry of entries) {
    if (typeof entry.Id !== 'string' || !ENTRY_ID.test(entry.Id))
      throw new SqsError(
        'InvalidBatchEntryId',
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    if (ids.has(entry.Id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${entry.Id} repeated.`);
    ids.add(entry.Id);
  }
  return entries;
}

function checkedBody(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new SqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
  if (Buffer.byteLength(value, 'utf8') > MAX_MESSAGE_BYTES)
    throw new SqsError('InvalidParameterValue', `One or more parameters are invalid. Reason: Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
  if (!VALID_BODY.test(value)) throw new SqsError('InvalidMessageContents', 'Invalid characters found.');
  return value;
}

/** Message attributes would need their own MD5; nothing here sends them. */
function refuseAttributes(entry: Body): void {
  if (entry.MessageAttributes !== undefined || entry.MessageSystemAttributes !== undefined) {
    throw new SqsError('InvalidParameterValue', 'The local SQS does not keep message attributes.');
  }
}

function delayOf(entry: Body): { delaySeconds?: number } {
  const delay = integerIn(entry.DelaySeconds, 0, 900, 'DelaySeconds');
  return delay === undefined ? {} : { delaySeconds: delay };
}

function visibilityOf(entry: Body): number {
  const seconds = integerIn(entry.VisibilityTimeout, 0, MAX_VISIBILITY_TIMEOUT_SECONDS, 'VisibilityTimeout');
  if (seconds === undefined) throw new SqsError('MissingParameter', 'The request must contain the parameter VisibilityTimeout.');
  return seconds;
}

function receiptHandleOf(entry: Body): string {
  if (typeof entry.ReceiptHandle !== 'string' || entry.ReceiptHandle === '')
    throw new SqsError('MissingParameter', 'The request must contain the parameter ReceiptHandle.');
  return entry.ReceiptHandle;
}

function integerIn(value: unknown, min: number, max: number, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SqsError('InvalidParameterValue', `Value ${String(value)} for parameter ${name} is invalid. Reason: must be between ${min} and ${max}.`);
  }
  return value;
}

function messageOf(message: ReceivedMessage, wanted: ReadonlySet<string>): Body {
  const all: Record<string, string> = {
    ApproximateReceiveCount: String(message.receiveCount),
    SentTimestamp: String(message.sentTimestamp),
    ApproximateFirstReceiveTimestamp: String(message.firstReceiveTimestamp),
    SenderId: message.senderId,
  };
  const attributes = wanted.has('All') ? all : Object.fromEntries(Object.entries(all).filter(([name]) => wanted.has(name)));
  return {
    MessageId: message.messageId,
    ReceiptHandle: message.receiptHandle,
    MD5OfBody: message.md5OfBody,
    Body: message.body,
    ...(Object.keys(attributes).length > 0 ? { Attributes: attributes } : {}),
  };
}

/** The caller's access key, from its SigV4 Authorization header, as SQS's SenderId names the sender. */
function senderOf(req: IncomingMessage): string {
  const credential = /Credential=([^/,\s]+)/.exec(String(req.headers.authorization ?? ''));
  return credential?.[1] ?? 'anonymous';
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function asObject(value: unknown): Body {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) throw new SqsError('RequestEntityTooLarge', 'The request is too large.', 413);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, body: Body): void {
  res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  // The SQS client reads the query-protocol code from this header into the error's `Code` (awsQueryCompatible).
  const queryCode = QUERY_CODES.has(code) ? `AWS.SimpleQueueService.${code === 'QueueDoesNotExist' ? 'NonExistentQueue' : code}` : code;
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'x-amzn-requestid': randomUUID(),
    'x-amzn-query-error': `${queryCode};${status >= 500 ? 'Receiver' : 'Sender'}`,
  });
  res.end(JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message }));
}
