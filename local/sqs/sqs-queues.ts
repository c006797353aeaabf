/**
 * The local SQS's model: standard queues held in memory, with what the webhook delivery path
 * relies on from SQS. A received message stays in flight for its visibility timeout and then
 * comes back; ChangeMessageVisibility moves that moment (the delivery function's backoff); a
 * message received more than the queue's maxReceiveCount times goes to its dead-letter queue
 * instead of being received again; a long poll waits for a message to become visible.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** How a queue is made: the template's properties that matter here. */
export interface SqsQueueConfig {
  readonly name: string;
  /** @default 30 */
  readonly visibilityTimeoutSeconds?: number;
  /** @default 345600 (4 days) */
  readonly messageRetentionSeconds?: number;
  /** @default 0 */
  readonly delaySeconds?: number;
  /** @default 0 */
  readonly receiveMessageWaitTimeSeconds?: number;
  /** RedrivePolicy: where a message goes after `maxReceiveCount` receives. */
  readonly redrive?: { readonly deadLetterQueueName: string; readonly maxReceiveCount: number };
}

/** A message as ReceiveMessage returns it. */
export interface ReceivedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly receiveCount: number;
  readonly sentTimestamp: number;
  readonly firstReceiveTimestamp: number;
  readonly senderId: string;
}

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly sentTimestamp: number;
  readonly senderId: string;
  visibleAt: number;
  receiveCount: number;
  firstReceiveTimestamp?: number;
  /** The handle of the latest receive; only it can change the message's visibility. */
  receiptHandle?: string;
}

/** A request SQS refuses, with its error code (the JSON protocol's `__type` after `#`). */
export class SqsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'SqsError';
  }
}

/** SQS's longest visibility timeout, and its longest long poll. */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
export const MAX_WAIT_SECONDS = 20;

/** One standard queue. */
export class SqsQueue {
  readonly arn: string;
  readonly #messages = new Map<string, StoredMessage>();
  readonly #waiters = new Set<() => void>();

  constructor(
    readonly config: SqsQueueConfig,
    scope: { readonly region: string; readonly accountId: string },
    private readonly deadLetterQueue: () => SqsQueue | undefined,
  ) {
    this.arn = `arn:aws:sqs:${scope.region}:${scope.accountId}:${config.name}`;
  }

  get name(): string {
    return this.config.name;
  }

  get visibilityTimeoutSeconds(): number {
    return this.config.visibilityTimeoutSeconds ?? 30;
  }

  /** Adds a message; visible after `delaySeconds` (the queue's when absent). */
  send(
    body: string,
    options: { readonly delaySeconds?: number; readonly senderId: string; readonly messageId?: string },
  ): { messageId: string; md5OfBody: string } {
    const now = Date.now();
    const message: StoredMessage = {
      messageId: options.messageId ?? randomUUID(),
      body,
      md5OfBody: createHash('md5').update(body, 'utf8').digest('hex'),
      sentTimestamp: now,
      senderId: options.senderId,
      visibleAt: now + (options.delaySeconds ?? this.config.delaySeconds ?? 0) * 1000,
      receiveCount: 0,
    };
    this.#messages.set(message.messageId, message);
    this.#wake();
    return { messageId: message.messageId, md5OfBody: message.md5OfBody };
  }

  /** Up to `max` visible messages, each now in flight; waits up to `waitSeconds` for one when none is. */
  async receive(options: {
    readonly max: number;
    readonly visibilityTimeoutSeconds?: number;
    readonly waitSeconds: number;
    readonly signal?: AbortSignal;
  }): Promise<ReceivedMessage[]> {
    const until = Date.now() + options.waitSeconds * 1000;
    for (;;) {
      if (options.signal?.aborted) return [];
      const received = this.#take(options.max, options.visibilityTimeoutSeconds ?? this.visibilityTimeoutSeconds);
      const remaining = until - Date.now();
      if (received.length > 0 || remaining <= 0) return received;
      await this.#waitForChange(Math.min(remaining, this.#nextVisibleIn()), options.signal);
    }
  }

  /** Deletes the message the handle names, if it is that message's latest receive (SQS ignores an older one). */
  delete(receiptHandle: string): void {
    const message = this.#messageOf(receiptHandle);
    if (message && message.receiptHandle === receiptHandle) this.#messages.delete(message.messageId);
  }

  /** Makes an in-flight message visible again `seconds` from now. */
  changeVisibility(receiptHandle: string, seconds: number): void {
    const message = this.#messageOf(receiptHandle);
    const now = Date.now();
    if (!message || message.receiptHandle !== receiptHandle || message.visibleAt <= now) {
      throw new SqsError('MessageNotInflight', 'Message does not exist or is not available for visibility timeout change.');
    }
    message.visibleAt = now + seconds * 1000;
    this.#wake();
  }

  /** The counts GetQueueAttributes reports. */
  counts(): { visible: number; inFlight: number; delayed: number } {
    const now = Date.now();
    let visible = 0;
    let inFlight = 0;
    let delayed = 0;
    for (const message of this.#live(now)) {
      if (message.visibleAt <= now) visible++;
      else if (message.receiveCount > 0) inFlight++;
      else delayed++;
    }
    return { visible, inFlight, delayed };
  }

  /** Ends every long poll waiting on this queue. */
  close(): void {
    for (const wake of this.#waiters) wake();
  }

  #take(max: number, visibilitySeconds: number): ReceivedMessage[] {
    const now = Date.now();
    const out: ReceivedMessage[] = [];
    for (const message of this.#live(now)) {
      if (out.length >= max) break;
      if (message.visibleAt > now) continue;
      const redrive = this.config.redrive;
      const deadLetters = redrive && message.receiveCount >= redrive.maxReceiveCount ? this.deadLetterQueue() : undefined;
      if (deadLetters) {
        // SQS moves it rather than deliver it once more; it keeps its id and its original send time.
        this.#messages.delete(message.messageId);
        deadLetters.send(message.body, { senderId: message.senderId, messageId: message.messageId });
        continue;
      }
      message.receiveCount++;
      message.firstReceiveTimestamp ??= now;
      message.visibleAt = now + visibilitySeconds * 1000;
      message.receiptHandle = Buffer.from(`${this.name}:${message.messageId}:${randomBytes(12).toString('hex')}`).toString('base64url');
      out.push({
        messageId: message.messageId,
        receiptHandle: message.receiptHandle,
        body: message.body,
        md5OfBody: message.md5OfBody,
        receiveCount: message.receiveCount,
        sentTimestamp: message.sentTimestamp,
        firstReceiveTimestamp: message.firstReceiveTimestamp,
        senderId: message.senderId,
      });
    }
    return out;
  }

  /** The messages still within retention; older ones are gone, as SQS deletes them. */
  *#live(now: number): Generator<StoredMessage> {
    const retentionMs = (this.config.messageRetentionSeconds ?? 345_600) * 1000;
    for (const message of this.#messages.values()) {
      if (now - message.sentTimestamp > retentionMs) this.#messages.delete(message.messageId);
      else yield message;
    }
  }

  #nextVisibleIn(): number {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const message of this.#messages.values()) next = Math.min(next, message.visibleAt - now);
    return Math.max(1, next);
  }

  #messageOf(receiptHandle: string): StoredMessage | undefined {
    const [queue, messageId] = Buffer.from(receiptHandle, 'base64url').toString('utf8').split(':');
    if (queue !== this.name || !messageId)
      throw new SqsError('ReceiptHandleIsInvalid', `The input receipt handle "${receiptHandle}" is not a valid receipt handle.`);
    return this.#messages.get(messageId);
  }

  #waitForChange(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

/** The queues of one account and Region, by name. */
export class SqsQueues {
  readonly #queues = new Map<string, SqsQueue>();

  constructor(
    configs: readonly SqsQueueConfig[],
    readonly scope: { readonly region: string; readonly accountId: string },
  ) {
    for (const config of configs) {
      const redrive = config.redrive;
      if (redrive && !configs.some((other) => other.name === redrive.deadLetterQueueName)) {
        throw new Error(`queue ${config.name}: its dead-letter queue ${redrive.deadLetterQueueName} is not one of the queues`);
      }
      this.#queues.set(config.name, new SqsQueue(config, scope, () => (redrive ? this.#queues.get(redrive.deadLetterQueueName) : undefined)));
    }
  }

  /** The queue a name names, or undefined. */
  get(name: string): SqsQueue | undefined {
    return this.#queues.get(name);
  }

  /** The queue a URL names (`.../<account>/<name>`, whatever the host), or QueueDoesNotExist. */
  byUrl(queueUrl: unknown): SqsQueue {
    const path = typeof queueUrl === 'string' ? (URL.parse(queueUrl)?.pathname ?? '') : '';
    const [account, name, ...rest] = path.split('/').filter(Boolean);
    const queue = account === this.scope.accountId && name !== undefined && rest.length === 0 ? this.#queues.get(name) : undefined;
    if (!queue) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    return queue;
  }

  all(): SqsQueue[] {
    return [...this.#queues.values()];
  }

  close(): void {
    for (const queue of this.#queues.values()) queue.close();
  }
}
