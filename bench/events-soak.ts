/**
 * The Events soak (issue 37, "Events that are never lost"): many operations of one principal,
 * large results among them, with every `operation.finished` followed by poll, by push and by
 * webhook at once, while DynamoDB throttles one write in ten, SQS one send in ten, and the
 * receiver answers 503 to one delivery in five. Webhook jobs go through a real SQS queue (the
 * local SQS endpoint) and an event source mapping, as deployed. It prints, per mode, how many
 * of the expected events arrived (by `eventId`), the duplicates, the delivery latency from the
 * occurrence's timestamp, and the DynamoDB and SQS calls per delivered event. It asserts nothing.
 *
 *   npx tsx bench/events-soak.ts                                      1,000 operations, 300 webhooks
 *   BENCH_EVENTS_SOAK_OPERATIONS=100 BENCH_EVENTS_SOAK_WEBHOOKS=30 npx tsx bench/events-soak.ts
 *
 * Faults are injected on the wire, after the SDK's retry middleware, as AWS throttles: the SDK
 * retries each (the clients' own maxAttempts), and what still fails reaches our code. Webhook
 * retries are bounded by design (`delivery.maxAttempts`); the soak gives them ten tries at 1 to
 * 4 s, so a one-in-five failure rate exhausts about one delivery in ten million.
 *
 * One operation in QUESTION_EVERY asks the client to confirm first (confirm_payload) while the
 * question's writes (the record's and its `operation.input_required` event's) are throttled
 * six times in ten: a subscriber of `operation.input_required` answers each question it is told
 * of, once. It prints whether every question still waited for its answer exactly once (one
 * key, `confirm`, one event, answered once, and the run completed with the answer), and what
 * the question's subscribers (a poller and one webhook in ten) received.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetExecutionHistoryCommand, ListExecutionsCommand, ListStateMachinesCommand, SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { countAwsCalls, type MiddlewareClient } from '../lambdas/aws/aws-call-counter.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../lambdas/aws/sqs-webhook-delivery-queue.ts';
import { createSqsDeliveryBatch } from '../lambdas/events/webhooks/sqs-delivery-batch.ts';
import { generateWebhookSecret } from '../lambdas/events/webhooks/webhook-secret.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { startLocalSqs } from '../local/sqs/local-sqs.ts';
import { startSqsEventSource } from '../local/sqs/sqs-event-source.ts';
import { MODERN_VERSION, modernRequest } from '../test/support/raw-mcp.ts';
import { openStream } from '../test/support/sse-reader.ts';
import { TASKS_EXTENSION } from './local-server-process.ts';

const OPERATIONS = Number(process.env.BENCH_EVENTS_SOAK_OPERATIONS ?? 1000);
const WEBHOOKS = Number(process.env.BENCH_EVENTS_SOAK_WEBHOOKS ?? 300);
/** Every LARGE_EVERY-th operation returns LARGE_BYTES, inlined in its operation.finished. */
const LARGE_EVERY = 10;
const LARGE_BYTES = 200 * 1024;
const FAULTS = { dynamodbWrite: 0.1, sqsSend: 0.1, receiver503: 0.2, questionWrite: 0.6 };
/** Every QUESTION_EVERY-th operation (offset by one from the large ones) asks a question first. */
const QUESTION_EVERY = 5;
/** Webhooks of `operation.input_required`, beside those of `operation.finished`. */
const QUESTION_WEBHOOKS = Math.max(1, Math.round(WEBHOOKS / 10));
const INPUT_REQUIRED = 'operation.input_required';
/** The soak's client can show a form, so its questions are asked. */
const CAPABILITIES = { ...TASKS_EXTENSION, elicitation: {} };
const STARTS_IN_FLIGHT = 8;
/** How long after the last start every subscriber may take to catch up. */
const CATCH_UP_MS = Number(process.env.BENCH_EVENTS_SOAK_CATCH_UP_SECONDS ?? 600) * 1000;
const SEED = Number(process.env.BENCH_EVENTS_SOAK_SEED ?? 7);
const PRINCIPAL = 'oauth:events-soak';
const FINISHED = 'operation.finished';

const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);
const SQS_SENDS = new Set(['SendMessage', 'SendMessageBatch']);

/** A seeded generator (mulberry32): the same faults on every run with the same seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A question's writes: the record's (the ask writes the used keys) and its event's. */
function isQuestionWrite(command: string, input: unknown): boolean {
  const { Item, ExpressionAttributeNames } = input as { Item?: Record<string, { S?: string }>; ExpressionAttributeNames?: Record<string, string> };
  if (command === 'PutItem') return Item?.name?.S === INPUT_REQUIRED;
  return command === 'UpdateItem' && Object.values(ExpressionAttributeNames ?? {}).includes('usedInputKeys');
}

/** Fails `rate` of the wire attempts of `commands` with a throttling error, after the SDK's retry middleware (so it retries them). */
function injectThrottling(
  client: MiddlewareClient,
  commands: Set<string>,
  rate: number,
  errorName: string,
  random: () => number,
  matches: (command: string, input: unknown) => boolean = () => true,
  label = errorName,
): { injected: () => number } {
  let injected = 0;
  const stack = client.middlewareStack as unknown as {
    addRelativeTo(middleware: unknown, options: { relation: 'after'; toMiddleware: string; name: string }): void;
  };
  stack.addRelativeTo(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      const name = (context.commandName ?? '').replace(/Command$/, '');
      if (commands.has(name) && matches(name, (args as { input?: unknown }).input) && random() < rate) {
        injected++;
        throw Object.assign(new Error(`Injected throttling of ${name}`), {
          name: errorName,
          $fault: 'client',
          $metadata: { httpStatusCode: 400, attempts: 1 },
        });
      }
      return next(args);
    },
    { relation: 'after', toMiddleware: 'retryMiddleware', name: `eventsSoakFaults${label}` },
  );
  return { injected: () => injected };
}

/** What one subscriber received: first arrival per eventId, and every repeat. */
class Arrivals {
  readonly first = new Map<string, number>();
  duplicates = 0;
  note(eventId: string, timestamp: string): void {
    if (this.first.has(eventId)) {
      this.duplicates++;
      return;
    }
    this.first.set(eventId, Date.now() - Date.parse(timestamp));
  }
  missingOf(expected: ReadonlySet<string>): number {
    let missing = 0;
    for (const id of expected) if (!this.first.has(id)) missing++;
    return missing;
  }
}

interface Receiver {
  origin: string;
  hooks: Arrivals[];
  answered503: number;
  posts: number;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that keeps only ids and times (bodies are up to 256 KiB each). */
async function startReceiver(count: number, random: () => number): Promise<Receiver> {
  const receiver: Receiver = { origin: '', hooks: Array.from({ length: count }, () => new Arrivals()), answered503: 0, posts: 0, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.posts++;
      const index = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; challenge?: string; eventId?: string; timestamp?: string };
      if (body.type === 'verification') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: body.challenge }));
        return;
      }
      if (random() < FAULTS.receiver503) {
        receiver.answered503++;
        res.writeHead(503).end();
        return;
      }
      const hook = receiver.hooks[index];
      if (hook && body.eventId && body.timestamp) hook.note(body.eventId, body.timestamp);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

export async function printEventsSoak(): Promise<void> {
  const random = seeded(SEED);
  const sqs = await startLocalSqs({ region: 'us-east-1', accountId: '000000000000', queues: [{ name: 'events-soak-deliveries' }] });
  const queueUrl = sqs.queueUrl('events-soak-deliveries');
  const sqsClient = new SQSClient({
    ...SQS_CLIENT_CONFIG,
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: { accessKeyId: 'LOCALSOAK', secretAccessKey: 'local' },
  });
  const queue = new SqsWebhookDeliveryQueue({ client: sqsClient, queueUrl });
  const stack = await startLocalStack({
    toolsDir: 'bench/fixtures/soak-tools',
    port: 0,
    limits: { ...DEFAULT_LIMITS, maxActiveOperations: OPERATIONS + 10 },
    ttl: { intervalMs: 3_600_000 },
    events: {
      queue,
      maxSubscriptionsPerPrincipal: WEBHOOKS + 10,
      delivery: { baseDelaySeconds: 1, maxDelaySeconds: 4, maxAttempts: 10 },
      suspension: { minAttempts: Number.MAX_SAFE_INTEGER },
    },
  });
  // Webhooks need an authenticated principal; the soak stands in for one OAuth subject.
  const inRequest = new AsyncLocalStorage<true>();
  const fetch = stack.app.fetch;
  stack.app.fetch = (request, principal) => inRequest.run(true, () => fetch(request, principal === 'local' ? PRINCIPAL : principal));
  const deliver = stack.app.deliverWebhookJob;
  if (!deliver) throw new Error('events-soak: the app has no webhook delivery');
  const batch = createSqsDeliveryBatch({ deliver, retries: queue, logger: { error: () => undefined, warn: () => undefined } });
  const source = startSqsEventSource({
    client: sqsClient,
    queueUrl,
    queueArn: 'arn:aws:sqs:us-east-1:000000000000:events-soak-deliveries',
    region: 'us-east-1',
    maxConcurrency: 4,
    reportBatchItemFailures: true,
    invoke: (event) => batch(event),
    logger: { warn: () => undefined },
  });
  const receiver = await startReceiver(WEBHOOKS + QUESTION_WEBHOOKS, random);
  const dynamoCalls = countAwsCalls(stack.awsClients.dynamodb);
  const sqsCalls = countAwsCalls(sqsClient);
  const dynamoFaults = injectThrottling(stack.awsClients.dynamodb, DYNAMODB_WRITES, FAULTS.dynamodbWrite, 'ProvisionedThroughputExceededException', random);
  const sqsFaults = injectThrottling(sqsClient, SQS_SENDS, FAULTS.sqsSend, 'RequestThrottled', random);
  const questionFaults = injectThrottling(
    stack.awsClients.dynamodb,
    DYNAMODB_WRITES,
    FAULTS.questionWrite,
    'ProvisionedThroughputExceededException',
    random,
    isQuestionWrite,
    'Questions',
  );
  const rpc = (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { capabilities: CAPABILITIES });
  let stopping = false;
  const poll = new Arrivals();
  const push = new Arrivals();
  const questionPoll = new Arrivals();
  const questions = new Questions();
  const expected = new Set<string>();
  const asking = new Set<string>();
  const answerOnce = async (event: QuestionEvent) => {
    const taskId = event.data.operationId;
    const keys = Object.keys(event.data.inputRequests ?? {});
    questions.noteEvent(taskId, event.eventId, keys);
    // Only confirm_payload asks; its start may not be back yet, so the answer does not wait for it.
    if (questions.answered.has(taskId)) return;
    const task = (await rpc('tasks/get', { taskId })).message?.result as { inputRequests?: Record<string, unknown> } | undefined;
    questions.noteShown(taskId, Object.keys(task?.inputRequests ?? {}));
    for (let attempt = 0; attempt < 20; attempt++) {
      const ack = await rpc('tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: {} } } });
      if (ack.message?.result) {
        questions.answered.add(taskId);
        return;
      }
      // A throttled write the SDK could not get through: the client answers again, as a host would.
      await sleep(100);
    }
  };
  const failedStarts = { count: 0 };
  try {
    const started = performance.now();
    for (let i = 0; i < WEBHOOKS + QUESTION_WEBHOOKS; i++) {
      for (;;) {
        const answer = await rpc('events/subscribe', {
          name: i < WEBHOOKS ? FINISHED : INPUT_REQUIRED,
          arguments: {},
          delivery: { mode: 'webhook', url: `${receiver.origin}/hook/${i}`, secret: generateWebhookSecret() },
          cursor: null,
          ttlMs: 3_600_000,
        });
        if (answer.message?.result) break;
        // A throttled write the SDK could not get through: the client tries again, as a host would.
        await sleep(50);
      }
    }
    const first = await rpc('events/poll', { name: FINISHED, arguments: {}, cursor: null });
    const startCursor = first.message?.result?.cursor as string;
    const questionStart = (await rpc('events/poll', { name: INPUT_REQUIRED, arguments: {}, cursor: null })).message?.result?.cursor as string;
    // The question's subscriber: answers each question it is told of, once, after checking tasks/get shows that one question.
    const answerer = (async () => {
      let cursor = questionStart;
      while (!stopping) {
        const result = (await rpc('events/poll', { name: INPUT_REQUIRED, arguments: {}, cursor })).message?.result;
        if (!result) {
          await sleep(200);
          continue;
        }
        for (const event of result.events as QuestionEvent[]) {
          questionPoll.note(event.eventId, event.timestamp);
          await answerOnce(event);
        }
        cursor = result.cursor;
        if (!result.hasMore) await sleep(250);
      }
    })();
    const poller = (async () => {
      let cursor = startCursor;
      while (!stopping) {
        const answer = await rpc('events/poll', { name: FINISHED, arguments: {}, cursor });
        const result = answer.message?.result;
        if (!result) {
          await sleep(200);
          continue;
        }
        for (const event of result.events as Array<{ eventId: string; timestamp: string }>) poll.note(event.eventId, event.timestamp);
        cursor = result.cursor;
        if (!result.hasMore) await sleep(250);
      }
    })();
    const pusher = (async () => {
      let cursor = startCursor;
      while (!stopping) {
        const stream = await openStream(
          stack.url,
          { jsonrpc: '2.0', id: 1, method: 'events/stream', params: { name: FINISHED, arguments: {}, cursor, _meta: modernMeta() } },
          { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'events/stream', 'mcp-name': FINISHED },
        ).catch(() => undefined);
        if (!stream) {
          await sleep(200);
          continue;
        }
        try {
          while (!stopping) {
            const message = await stream.next();
            if (typeof message.params?.cursor === 'string') cursor = message.params.cursor;
            if (message.method === 'notifications/events/event') push.note(message.params.eventId, message.params.timestamp);
          }
        } catch {
          // The stream ended (its bound, or an error): open the next from the last cursor.
        } finally {
          await stream.cancel().catch(() => undefined);
        }
      }
    })();

    // Operations: STARTS_IN_FLIGHT at a time; a start refused after the SDK's retries is tried again, as a client would.
    let next = 0;
    const starter = async () => {
      while (next < OPERATIONS) {
        const i = next++;
        const payload = i % LARGE_EVERY === 0 ? 'x'.repeat(LARGE_BYTES) : `operation ${i}`;
        const asks = i % QUESTION_EVERY === 1;
        const call = asks ? { name: 'confirm_payload', arguments: { payload } } : { name: 'echo_payload', arguments: { payload, waitSeconds: 1 } };
        for (;;) {
          const answer = await rpc('tools/call', call);
          const taskId = answer.message?.result?.taskId as string | undefined;
          if (taskId) {
            expected.add(taskId);
            if (asks) asking.add(taskId);
            break;
          }
          failedStarts.count++;
          await sleep(50);
        }
      }
    };
    await Promise.all(Array.from({ length: STARTS_IN_FLIGHT }, starter));
    const startsMs = performance.now() - started;

    // An event's id is per operation; the subscribers' ids are mapped back through the log's own answer.
    const { ids: expectedEvents, completed } = await finishedEventIds(rpc, startCursor, expected);
    const finishedHooks = receiver.hooks.slice(0, WEBHOOKS);
    const questionHooks = receiver.hooks.slice(WEBHOOKS);
    const deadline = Date.now() + CATCH_UP_MS;
    const everyoneHasAll = () =>
      [poll, push, ...finishedHooks].every((arrivals) => arrivals.missingOf(expectedEvents) === 0) &&
      [questionPoll, ...questionHooks].every((arrivals) => arrivals.missingOf(questions.eventIds()) === 0);
    while (Date.now() < deadline && !everyoneHasAll()) await sleep(500);
    stopping = true;
    await stack.drainEvents();
    await source.idle();
    printSoak({
      expected: expectedEvents,
      operations: expected.size,
      failedStarts: failedStarts.count,
      startsMs,
      totalMs: performance.now() - started,
      poll,
      push,
      finishedHooks,
      receiver,
      dynamo: dynamoCalls.snapshot(),
      sqs: sqsCalls.snapshot(),
      injected: { dynamodb: dynamoFaults.injected(), sqs: sqsFaults.injected(), questions: questionFaults.injected() },
    });
    printQuestions({
      asking,
      completed,
      questions,
      questionEvents: questions.eventIds(),
      questionPoll,
      questionHooks,
      askFailed: await askFailures(stack.sfnEndpoint),
    });
    await Promise.race([Promise.all([poller, pusher, answerer]), sleep(5000)]);
  } finally {
    stopping = true;
    dynamoCalls.remove();
    sqsCalls.remove();
    await source.close();
    await receiver.close();
    await stack.close();
    await sqs.close();
    sqsClient.destroy();
  }
}

/**
 * The eventIds of the operations' `operation.finished`, read from the log by poll until every
 * operation has one (the log is the reference every mode is held to).
 */
async function finishedEventIds(
  rpc: (method: string, params: Record<string, unknown>) => ReturnType<typeof modernRequest>,
  cursor: string,
  operations: ReadonlySet<string>,
): Promise<{ ids: Set<string>; completed: Set<string> }> {
  const ids = new Set<string>();
  /** Operations that ended completed without an error, with the answer in their result when they asked. */
  const completed = new Set<string>();
  const seen = new Set<string>();
  const deadline = Date.now() + CATCH_UP_MS;
  let at = cursor;
  while (seen.size < operations.size && Date.now() < deadline) {
    const result = (await rpc('events/poll', { name: FINISHED, arguments: {}, cursor: at })).message?.result;
    if (!result) continue;
    for (const event of result.events as FinishedEvent[]) {
      const operation = event.data.taskId ?? event.data.operationId;
      if (operation && operations.has(operation)) {
        seen.add(operation);
        ids.add(event.eventId);
        const output = event.data.result?.structuredContent;
        if (event.data.status === 'completed' && !event.data.isError && (output?.confirmation === undefined || output.confirmation.action === 'accept')) {
          completed.add(operation);
        }
      }
    }
    at = result.cursor;
    if (!result.hasMore) await sleep(250);
  }
  return { ids, completed };
}

/** How many attempts of confirm_payload's asking state failed with Mcp.AskFailed (and were retried), from the executions' histories. */
async function askFailures(endpoint: string): Promise<number> {
  const sfn = new SFNClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  try {
    const machines = (await sfn.send(new ListStateMachinesCommand({}))).stateMachines ?? [];
    const machine = machines.find(({ name }) => name?.includes('confirm_payload'));
    if (!machine?.stateMachineArn) return Number.NaN;
    let failures = 0;
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine.stateMachineArn, maxResults: 100, nextToken }));
      for (const { executionArn } of page.executions ?? []) {
        let historyToken: string | undefined;
        do {
          const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken: historyToken }));
          failures += (history.events ?? []).filter((event) => event.taskFailedEventDetails?.error === 'Mcp.AskFailed').length;
          historyToken = history.nextToken;
        } while (historyToken);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return failures;
  } finally {
    sfn.destroy();
  }
}

interface FinishedEvent {
  eventId: string;
  data: {
    operationId?: string;
    taskId?: string;
    status?: string;
    isError?: boolean;
    result?: { structuredContent?: { confirmation?: { action?: string } } };
  };
}

interface QuestionEvent {
  eventId: string;
  timestamp: string;
  data: { operationId: string; inputRequests?: Record<string, unknown> };
}

/** What became of each question: the events and keys it was told by, the keys tasks/get showed, whether it was answered. */
class Questions {
  readonly events = new Map<string, Set<string>>();
  readonly keys = new Map<string, Set<string>>();
  readonly answered = new Set<string>();
  noteEvent(taskId: string, eventId: string, keys: string[]): void {
    if (!this.events.has(taskId)) this.events.set(taskId, new Set());
    this.events.get(taskId)?.add(eventId);
    this.noteShown(taskId, keys);
  }
  noteShown(taskId: string, keys: string[]): void {
    if (!this.keys.has(taskId)) this.keys.set(taskId, new Set());
    for (const key of keys) this.keys.get(taskId)?.add(key);
  }
  eventIds(): Set<string> {
    return new Set([...this.events.values()].flatMap((ids) => [...ids]));
  }
}

function printQuestions(m: {
  asking: ReadonlySet<string>;
  completed: ReadonlySet<string>;
  questions: Questions;
  questionEvents: Set<string>;
  questionPoll: Arrivals;
  questionHooks: Arrivals[];
  askFailed: number;
}): void {
  const { asking, completed, questions } = m;
  const told = [...asking].filter((id) => questions.events.has(id)).length;
  const oneEvent = [...asking].filter((id) => questions.events.get(id)?.size === 1).length;
  const oneKey = [...asking].filter((id) => {
    const keys = questions.keys.get(id);
    return keys?.size === 1 && keys.has('confirm');
  }).length;
  const answered = [...asking].filter((id) => questions.answered.has(id)).length;
  const done = [...asking].filter((id) => completed.has(id)).length;
  const exactlyOnce = [...asking].filter(
    (id) => questions.events.get(id)?.size === 1 && questions.keys.get(id)?.size === 1 && questions.answered.has(id) && completed.has(id),
  ).length;
  console.log(
    `  questions: ${asking.size} asked (${m.askFailed} asks failed with Mcp.AskFailed and were retried); ${told} told by event, ${oneEvent} by exactly one event; ${oneKey} only ever under the key confirm; ${answered} answered once; ${done} completed with the answer`,
  );
  console.log(`  questions waited for their answer exactly once: ${exactlyOnce}/${asking.size}${exactlyOnce === asking.size ? '' : ' (LOST OR DOUBLED)'}`);
  const row = (name: string, arrivals: Arrivals[]) => {
    const missing = arrivals.reduce((n, a) => n + a.missingOf(m.questionEvents), 0);
    const complete = arrivals.filter((a) => a.missingOf(m.questionEvents) === 0).length;
    const duplicates = arrivals.reduce((n, a) => n + a.duplicates, 0);
    console.log(
      `  ${name.padEnd(9)} ${String(complete).padStart(4)}/${arrivals.length} question subscribers got every question event; missing ${missing}, repeated ${duplicates}`,
    );
  };
  row('poll', [m.questionPoll]);
  row('webhook', m.questionHooks);
}

function modernMeta() {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'events-soak', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': TASKS_EXTENSION,
  };
}

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function printSoak(m: {
  expected: Set<string>;
  operations: number;
  failedStarts: number;
  startsMs: number;
  totalMs: number;
  poll: Arrivals;
  push: Arrivals;
  finishedHooks: Arrivals[];
  receiver: Receiver;
  dynamo: Record<string, number>;
  sqs: Record<string, number>;
  injected: { dynamodb: number; sqs: number; questions: number };
}): void {
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `MCP Events soak (bench/events-soak.ts): ${m.operations} operations of one principal (1 in ${LARGE_EVERY} with a ${LARGE_BYTES / 1024} KiB result, 1 in ${QUESTION_EVERY} asking a question first), ${m.finishedHooks.length} webhooks of operation.finished and ${m.receiver.hooks.length - m.finishedHooks.length} of operation.input_required, one poller of each, one push stream`,
  );
  console.log(
    `  faults: ${m.injected.dynamodb} DynamoDB write attempts, ${m.injected.questions} more of questions' writes and ${m.injected.sqs} SQS send attempts throttled, ${m.receiver.answered503} deliveries answered 503; ${m.failedStarts} starts refused and tried again`,
  );
  console.log(`  starts took ${(m.startsMs / 1000).toFixed(1)} s; the whole run ${(m.totalMs / 1000).toFixed(1)} s`);
  console.log(`  expected operation.finished events: ${m.expected.size} (of ${m.operations} operations)`);
  const row = (name: string, arrivals: Arrivals[]) => {
    const missing = arrivals.reduce((n, a) => n + a.missingOf(m.expected), 0);
    const duplicates = arrivals.reduce((n, a) => n + a.duplicates, 0);
    const latency = arrivals.flatMap((a) => [...a.first.values()]);
    const complete = arrivals.filter((a) => a.missingOf(m.expected) === 0).length;
    console.log(
      `  ${name.padEnd(9)} ${String(complete).padStart(4)}/${arrivals.length} subscribers got every event; missing ${missing}, repeated ${duplicates}; latency p50=${percentile(latency, 0.5)} ms p95=${percentile(latency, 0.95)} ms`,
    );
  };
  row('poll', [m.poll]);
  row('push', [m.push]);
  row('webhook', m.finishedHooks);
  const delivered = m.poll.first.size + m.push.first.size + m.receiver.hooks.reduce((n, a) => n + a.first.size, 0);
  const format = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
  console.log(`  DynamoDB calls: ${sum(m.dynamo)} (${format(m.dynamo)}) = ${(sum(m.dynamo) / Math.max(1, delivered)).toFixed(2)} per delivered event`);
  console.log(`  SQS calls: ${sum(m.sqs)} (${format(m.sqs)}) = ${(sum(m.sqs) / Math.max(1, delivered)).toFixed(3)} per delivered event`);
  console.log(`  (${delivered} first arrivals in all; ${m.receiver.posts} webhook POSTs received, verifications included)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await printEventsSoak();
