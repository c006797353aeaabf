/**
 * The MCP Events extension in AWS (SEP-3415, DESIGN §5a): the settings every function that
 * serves or records events reads, and webhook delivery off the request path. Writers of the
 * event log enqueue one job per event and subscription on an SQS queue; a delivery function
 * consumes it (partial-batch failures, backoff through visibility timeouts); a job that keeps
 * failing lands in a dead-letter queue, whose depth raises an alarm. Least privilege: writers
 * may only send to the queue; the delivery function may only consume it and touch the table's
 * subscription and event items.
 */
import { join } from 'node:path';
import { CfnOutput, Duration, Validations } from 'aws-cdk-lib';
import { Stats, type Alarm, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { alarmAbove } from './operations-alarms.ts';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import { OPERATIONS_TABLE } from '../lambdas/aws/operations-table.ts';
import { EVENTS_DEFAULTS, MAX_SUBSCRIPTION_TTL_CEILING_SECONDS } from '../lambdas/events/events-settings.ts';
import { REPORT_PROGRESS_WORKER } from '../lambdas/tools/report-progress-states.ts';
import { REQUEST_INPUT_WORKER } from '../lambdas/tools/request-input-states.ts';
import { BundledFunction } from './bundled-function.ts';
import { POWERTOOLS_ENVIRONMENT } from './observability.ts';
import type { OperationsTable } from './operations-table.ts';
import { REPO_ROOT } from './repo-paths.ts';
import type { ServerKey } from './server-key.ts';
import type { FunctionTracing } from './server-tracing.ts';

/** The delivery function: SQS batches of webhook delivery jobs. */
export const EVENTS_DELIVERY_ENTRY = join(REPO_ROOT, 'lambdas', 'handlers', 'events-delivery.ts');

/** The `events` prop of AsyncMcpServer. */
export interface EventsOptions {
  /**
   * Serve the Events extension (`events/*`: poll, push and webhook). Off, every `events/*`
   * request answers -32601 and no queue or delivery function is deployed.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * How long the per-principal event log keeps an occurrence, in hours: how far back a
   * cursor can replay.
   * @default 24
   */
  readonly retentionHours?: number;
  /**
   * The longest TTL a webhook subscription is granted before the client must refresh it.
   * @default Duration.hours(1), at most Duration.hours(24)
   */
  readonly maxSubscriptionTtl?: Duration;
  /**
   * Delivery function invocations at once (the event source mapping's maximum concurrency,
   * 2 to 1000): how many batches of webhook POSTs run in parallel.
   * @default 10
   */
  readonly deliveryConcurrency?: number;
}

/** What a function does with events, and so what it is given. */
export interface EventsParticipant {
  readonly function: LambdaFunction;
  /** Appends occurrences to the event log (status sync, report_progress): PutItem on event items. */
  readonly appendsEvents?: boolean;
  /** Enqueues webhook deliveries: sqs:SendMessage on the delivery queue alone, and its URL. */
  readonly enqueues?: boolean;
  /** Finds the owner's subscriptions to enqueue for: a Query of the owner index (status sync, report_progress). */
  readonly listsSubscriptions?: boolean;
}

/**
 * The server's functions and what each does with events: status writes append occurrences and
 * enqueue their deliveries (status sync, report_progress); a question asked is an
 * `operation.input_required` occurrence (request_input); the MCP Lambda enqueues on subscribe.
 * A durable tool function asks and reports from inside itself, and so writes as both workers do.
 */
export function serverEventsParticipants(
  mcpFunction: LambdaFunction,
  statusSyncFunction: LambdaFunction | undefined,
  workerFunctions: ReadonlyMap<string, LambdaFunction>,
  durableToolFunctions: readonly LambdaFunction[] = [],
): EventsParticipant[] {
  const writers = [statusSyncFunction, workerFunctions.get(REPORT_PROGRESS_WORKER), workerFunctions.get(REQUEST_INPUT_WORKER), ...durableToolFunctions];
  return [
    { function: mcpFunction, enqueues: true },
    ...writers.flatMap((fn) => (fn ? [{ function: fn, appendsEvents: true, listsSubscriptions: true, enqueues: true }] : [])),
  ];
}

export interface EventsDeliveryProps {
  readonly options?: EventsOptions;
  readonly operations: OperationsTable;
  /** Webhook secrets are sealed at rest under a key derived from it. */
  readonly serverKey: ServerKey;
  /** The functions that serve or record events: each gets the settings, and what its role needs. */
  readonly participants: readonly EventsParticipant[];
  readonly logRetention: RetentionDays;
  readonly tracing: FunctionTracing;
  /** Told when the dead-letter queue fills. @default - no actions */
  readonly alarmTopic?: ITopic;
}

/** The partition key prefixes of the Events items in the operations table (lambdas/aws/dynamodb-event-log.ts, dynamodb-webhook-subscriptions.ts). */
const SUBSCRIPTION_ITEMS = 'SUB#*';
const EVENT_ITEMS = 'EVT#*';

/** Lambda's bounds on an SQS event source's maximum concurrency. */
const CONCURRENCY = { min: 2, max: 1000 };
/** The delivery function's timeout: a batch of ten POSTs runs at once, each bounded by the sender. */
const DELIVERY_TIMEOUT = Duration.seconds(60);
/**
 * Past the delivery logic's own attempts (it gives up, `dropped`, after `maxAttempts`), a few
 * receives for invocations that failed outright (the table unreachable): then the dead-letter queue.
 */
const MAX_RECEIVE_COUNT = EVENTS_DEFAULTS.delivery.maxAttempts + 3;
/** The longest a job waits on its own retries: the backoff before each attempt after the first. */
const RETRY_SCHEDULE_SECONDS = Array.from({ length: EVENTS_DEFAULTS.delivery.maxAttempts - 1 }, (_, attempt) =>
  Math.min(EVENTS_DEFAULTS.delivery.baseDelaySeconds * 2 ** attempt, EVENTS_DEFAULTS.delivery.maxDelaySeconds),
).reduce((sum, delay) => sum + delay, 0);
/** A job older than this is past its retries' backoff (about 8 minutes by default): deliveries are falling behind. */
const DELIVERY_BACKLOG_SECONDS = Math.max(15 * 60, 2 * RETRY_SCHEDULE_SECONDS);

export class EventsDelivery extends Construct {
  /** Whether the extension is served; when not, the members below are absent. */
  public readonly enabled: boolean;
  /** The settings every participant gets as environment variables. */
  public readonly environment: Readonly<Record<string, string>>;
  public readonly queue?: Queue;
  public readonly deadLetterQueue?: Queue;
  public readonly deliveryFunction?: BundledFunction;
  /** Jobs in the dead-letter queue: webhook deliveries that could not be run. */
  public readonly deadLetterAlarm?: Alarm;
  /** The delivery function threw, was throttled, or fell behind its queue. */
  public readonly deliveryAlarms?: { readonly errors: Alarm; readonly throttles: Alarm; readonly backlog: Alarm };

  constructor(scope: Construct, id: string, props: EventsDeliveryProps) {
    super(scope, id);
    const options = props.options ?? {};
    this.enabled = options.enabled ?? true;
    const retentionHours = wholeNumberIn('events.retentionHours', options.retentionHours ?? EVENTS_DEFAULTS.retentionHours, 1, 14 * 24);
    const maxTtlSeconds = wholeNumberIn(
      'events.maxSubscriptionTtl',
      options.maxSubscriptionTtl?.toSeconds() ?? EVENTS_DEFAULTS.maxSubscriptionTtlSeconds,
      60,
      MAX_SUBSCRIPTION_TTL_CEILING_SECONDS,
    );
    const concurrency = wholeNumberIn('events.deliveryConcurrency', options.deliveryConcurrency ?? 10, CONCURRENCY.min, CONCURRENCY.max);
    this.environment = this.enabled
      ? { [ENV.events]: '1', [ENV.eventsRetentionHours]: String(retentionHours), [ENV.eventsMaxSubscriptionTtlSeconds]: String(maxTtlSeconds) }
      : { [ENV.events]: '0' };
    for (const participant of props.participants)
      for (const [name, value] of Object.entries(this.environment)) participant.function.addEnvironment(name, value);
    if (!this.enabled) return;

    // A job is only ids (no body, no secret); one past the log's retention has nothing left to deliver.
    const retention = Duration.hours(retentionHours);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({ id: 'AwsSolutions-SQS3', reason: 'This queue is the dead-letter queue of the webhook delivery queue.' });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: retention,
      // Lambda's advice for SQS sources: six times the function's timeout, so a retried batch is not received twice.
      visibilityTimeout: Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    const delivery = new BundledFunction(this, 'Delivery', {
      entry: EVENTS_DELIVERY_ENTRY,
      description: 'async-mcp webhook delivery: signs and POSTs each Events occurrence to its subscribers',
      memorySize: 256,
      timeout: DELIVERY_TIMEOUT,
      environment: {
        [ENV.tableName]: props.operations.tableName,
        [ENV.secretArn]: props.serverKey.secret.secretArn,
        [ENV.eventsDeliveryQueueUrl]: this.queue.queueUrl,
        ...this.environment,
        // The names its logs and metrics carry, as the server's other functions' do.
        ...POWERTOOLS_ENVIRONMENT,
      },
      logRetention: props.logRetention,
      tracing: props.tracing,
    });
    this.deliveryFunction = delivery;
    // Receive, delete, and ChangeMessageVisibility (the backoff of a retry), on this queue only.
    delivery.function.addEventSource(
      new SqsEventSource(this.queue, { batchSize: 10, maxBatchingWindow: Duration.seconds(0), reportBatchItemFailures: true, maxConcurrency: concurrency }),
    );
    props.serverKey.grantRead(delivery.function);
    // The subscription (read, its delivery status saved, deleted once terminated) and the event it delivers.
    grantItems(props.operations, delivery.function, ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], [SUBSCRIPTION_ITEMS]);
    grantItems(props.operations, delivery.function, ['dynamodb:GetItem'], [EVENT_ITEMS]);

    for (const participant of props.participants) {
      // The append. The handover mark (UpdateItem, read back with GetItem on a redelivery) comes under the
      // record grants every writer of occurrences already has on the table (test/cdk/least-privilege.test.ts).
      if (participant.appendsEvents) grantItems(props.operations, participant.function, ['dynamodb:PutItem'], [EVENT_ITEMS]);
      if (participant.listsSubscriptions) {
        participant.function.addToRolePolicy(
          new PolicyStatement({
            effect: Effect.ALLOW,
            actions: ['dynamodb:Query'],
            resources: [`${props.operations.table.tableArn}/index/${OPERATIONS_TABLE.ownerIndex.name}`],
          }),
        );
      }
      if (participant.enqueues) {
        // SendMessage alone (grantSendMessages adds GetQueueAttributes and GetQueueUrl, which nothing here calls).
        participant.function.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
        participant.function.addEnvironment(ENV.eventsDeliveryQueueUrl, this.queue.queueUrl);
      }
    }

    const alarm = (alarmId: string, metric: IMetric, threshold: number, description: string): Alarm => {
      const created = alarmAbove(this, alarmId, metric, threshold, description);
      if (props.alarmTopic) {
        created.addAlarmAction(new SnsAction(props.alarmTopic));
        created.addOkAction(new SnsAction(props.alarmTopic));
      }
      return created;
    };
    const fiveMinutes = { statistic: Stats.SUM, period: Duration.minutes(5) };
    this.deadLetterAlarm = alarm(
      'DeadLetterQueueDepth',
      this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: Stats.MAXIMUM, period: Duration.minutes(5) }),
      0,
      'async-mcp: the webhook delivery dead-letter queue holds delivery jobs the delivery function failed on outright, receive after receive ' +
        '(jobs it gave up on after their retries are dropped, not dead-lettered). Subscribers miss those events until they replay from their cursor. ' +
        'To do: find the error in the delivery function logs (each line names the message id), fix it, then redrive the dead-letter queue to the delivery queue ' +
        '(each job is idempotent: the receiver dedupes on webhook-id). The stack outputs EventsDeadLetterQueueUrl and EventsDeliveryQueueUrl.',
    );
    // A receiver that refuses is a failed item, not an error: these fire on the function itself.
    this.deliveryAlarms = {
      errors: alarm(
        'DeliveryErrors',
        delivery.function.metricErrors(fiveMinutes),
        0,
        'async-mcp: the webhook delivery function threw (5-minute sum above 0): a whole batch failed, not one receiver. ' +
          'Its jobs are received again, and dead-lettered after their receives. To do: read the delivery function logs for the error.',
      ),
      throttles: alarm(
        'DeliveryThrottles',
        delivery.function.metricThrottles(fiveMinutes),
        0,
        "async-mcp: Lambda throttled the webhook delivery function (5-minute sum above 0): the account's concurrency is spent. " +
          "Jobs wait in the queue and webhooks arrive late. To do: compare ConcurrentExecutions with the account's quota; raise it, or lower the load.",
      ),
      backlog: alarm(
        'DeliveryBacklog',
        this.queue.metricApproximateAgeOfOldestMessage({ statistic: Stats.MAXIMUM, period: Duration.minutes(5) }),
        DELIVERY_BACKLOG_SECONDS,
        `async-mcp: the oldest webhook delivery job has waited over ${DELIVERY_BACKLOG_SECONDS / 60} minutes: deliveries fall behind ` +
          '(receivers slow or down, so jobs wait out their backoff, or the delivery concurrency too low for the load). Subscribers can poll events/poll meanwhile. ' +
          "To do: look at the delivery function's duration and the receivers' deliveryStatus; raise events.deliveryConcurrency if the load is real.",
      ),
    };

    new CfnOutput(this, 'EventsDeliveryQueueUrl', { description: 'The queue of webhook delivery jobs (Events extension)', value: this.queue.queueUrl });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', {
      description: 'Webhook delivery jobs that failed outright; empty in normal operation',
      value: this.deadLetterQueue.queueUrl,
    });
    new CfnOutput(this, 'EventsDeliveryFunctionName', { description: 'The webhook delivery Lambda', value: delivery.function.functionName });
  }
}

/**
 * `actions` on the table's items whose partition key matches `prefixes` only
 * (`dynamodb:LeadingKeys`), so a role that serves events cannot read or write operation records.
 */
function grantItems(operations: OperationsTable, grantee: IGrantable, actions: string[], prefixes: string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions,
      resources: [operations.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes } },
    }),
  );
}

function wholeNumberIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got ${value}`);
  return value;
}
