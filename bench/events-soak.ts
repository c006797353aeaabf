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
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { SQSClient } from '@aws-sdk/client-sqs';
import { countAwsCalls } from '../lambdas/aws/aws-call-counter.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../lambdas/aws/sqs-webhook-delivery-queue.ts';
import { createSqsDeliveryBatch } from '../lambdas/events/webhooks/sqs-delivery-batch.ts';
import { generateWebhookSecret } from '../lambdas/events/webhooks/webhook-secret.ts';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { startLocalSqs } from '../local/sqs/local-sqs.ts';
import { startSqsEventSource } from '../local/sqs/sqs-event-source.ts';
import { MODERN_VERSION } from '../test/support/raw-mcp.ts';
import { openStream } from '../test/support/sse-reader.ts';
import { Arrivals, FINISHED, INPUT_REQUIRED, type QuestionEvent, Questions } from './events-soak-arrivals.ts';
import { injectThrottling, isQuestionWrite, seeded } from './events-soak-faults.ts';
import { askFailures, finishedEventIds } from './events-soak-outcomes.ts';
import { printClient, printQuestions, printSoak } from './events-soak-report.ts';
import { startReceiver } from './events-soak-receiver.ts';
import { type SoakRpc, soakRpc } from './events-soak-rpc.ts';
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
/** The soak's client can show a form, so its questions are asked. */
const CAPABILITIES = { ...TASKS_EXTENSION, elicitation: {} };
const STARTS_IN_FLIGHT = 8;
/** How long after the last start every subscriber may take to catch up. */
const CATCH_UP_MS = Number(process.env.BENCH_EVENTS_SOAK_CATCH_UP_SECONDS ?? 600) * 1000;
const SEED = Number(process.env.BENCH_EVENTS_SOAK_SEED ?? 7);
const PRINCIPAL = 'oauth:events-soak';

const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);
const SQS_SENDS = new Set(['SendMessage', 'SendMessageBatch']);

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
  const receiver = await startReceiver(WEBHOOKS + QUESTION_WEBHOOKS, FAULTS.receiver503, random);
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
  const { rpc, tally } = soakRpc(stack.url, CAPABILITIES);
  // How long the loop that runs the server and the clients alike was held up (why connections close under load).
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  let stopping = false;
  const poll = new Arrivals();
  const push = new Arrivals();
  const questionPoll = new Arrivals();
  const questions = new Questions();
  const expected = new Set<string>();
  const asking = new Set<string>();
  // Answers each question it is told of, once per key: a question asked again under another key
  // is answered too (so its operation ends), and the report counts it as doubled.
  const answerOnce = async (event: QuestionEvent) => {
    const taskId = event.data.operationId;
    const keys = Object.keys(event.data.inputRequests ?? {});
    questions.noteEvent(taskId, event.eventId, keys);
    // Only confirm_payload asks; its start may not be back yet, so the answer does not wait for it.
    const unanswered = keys.filter((key) => !questions.answeredKeys(taskId).has(key));
    if (unanswered.length === 0) return;
    const task = (await rpc('tasks/get', { taskId }))?.message?.result as { inputRequests?: Record<string, unknown> } | undefined;
    questions.noteShown(taskId, Object.keys(task?.inputRequests ?? {}));
    for (const key of unanswered) {
      for (let attempt = 0; attempt < 20; attempt++) {
        const ack = await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: {} } } });
        // Sending the answer again is safe: once its key is answered, the server acks a repeat and
        // ignores it (test/e2e/input-tasks-extension.test.ts), so a repeat's ack counts as answered.
        if (ack?.message?.result) {
          questions.noteAnswered(taskId, key);
          break;
        }
        // A throttled write the SDK could not get through, or a request lost: the client answers again, as a host would.
        await sleep(100);
      }
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
        if (answer?.message?.result) break;
        // A throttled write the SDK could not get through: the client tries again, as a host would.
        await sleep(50);
      }
    }
    const startCursor = await firstCursor(rpc, FINISHED);
    const questionStart = await firstCursor(rpc, INPUT_REQUIRED);
    // The question's subscriber: answers each question it is told of, once, after checking tasks/get shows that one question.
    const answerer = (async () => {
      let cursor = questionStart;
      while (!stopping) {
        const result = (await rpc('events/poll', { name: INPUT_REQUIRED, arguments: {}, cursor }))?.message?.result;
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
        const result = (await rpc('events/poll', { name: FINISHED, arguments: {}, cursor }))?.message?.result;
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
          const taskId = answer?.message?.result?.taskId as string | undefined;
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
    const { ids: expectedEvents, completed } = await finishedEventIds(rpc, startCursor, expected, Date.now() + CATCH_UP_MS);
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
    loopDelay.disable();
    printSoak({
      shape: { largeEvery: LARGE_EVERY, largeBytes: LARGE_BYTES, questionEvery: QUESTION_EVERY },
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
    printClient({ tally, loopDelay });
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

/** The log's cursor for `name` now, asked until an answer comes. */
async function firstCursor(rpc: SoakRpc, name: string): Promise<string> {
  for (;;) {
    const cursor = (await rpc('events/poll', { name, arguments: {}, cursor: null }))?.message?.result?.cursor;
    if (typeof cursor === 'string') return cursor;
    await sleep(200);
  }
}

function modernMeta() {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'events-soak', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': TASKS_EXTENSION,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await printEventsSoak();
