/**
 * Recipe: "a webhook on completion", the AWS way. The server never calls arbitrary URLs; an
 * EventBridge API destination does, with the credentials of a connection whose secret
 * EventBridge keeps in Secrets Manager. The rule matches every finished operation (add `tool`
 * to the pattern to narrow it) and POSTs the event's detail as JSON, retried by EventBridge
 * and dead-lettered to a queue when the receiver keeps failing.
 */
import { Duration, type SecretValue } from 'aws-cdk-lib';
import { ApiDestination, Authorization, Connection, HttpMethod, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { ApiDestination as ApiDestinationTarget } from 'aws-cdk-lib/aws-events-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { AsyncMcpServer } from '../../cdk/async-mcp-server.ts';

export interface CompletionWebhookProps {
  /** The server whose events to send (its `eventBus`). */
  readonly server: AsyncMcpServer;
  /** The HTTPS URL to POST to. */
  readonly url: string;
  /**
   * The value of the header the receiver checks, e.g. `SecretValue.secretsManager('webhook-token')`;
   * EventBridge stores it in the connection's own secret.
   */
  readonly token: SecretValue;
  /** @default 'X-Webhook-Token' */
  readonly headerName?: string;
  /** @default 10 */
  readonly rateLimitPerSecond?: number;
}

export class CompletionWebhook extends Construct {
  public readonly connection: Connection;
  public readonly destination: ApiDestination;
  public readonly rule: Rule;
  /** Deliveries that failed every retry. */
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: CompletionWebhookProps) {
    super(scope, id);
    this.connection = new Connection(this, 'Connection', {
      description: 'async-mcp completion webhook',
      authorization: Authorization.apiKey(props.headerName ?? 'X-Webhook-Token', props.token),
    });
    this.destination = new ApiDestination(this, 'Destination', {
      connection: this.connection,
      endpoint: props.url,
      httpMethod: HttpMethod.POST,
      rateLimitPerSecond: props.rateLimitPerSecond ?? 10,
    });
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.rule = new Rule(this, 'Rule', {
      description: 'async-mcp: every finished operation, to the completion webhook',
      eventBus: props.server.eventBus,
      eventPattern: {
        source: ['async-mcp'],
        detailType: ['Operation Status Changed'],
        detail: { status: ['completed', 'failed', 'canceled'] },
      },
    });
    this.rule.addTarget(
      new ApiDestinationTarget(this.destination, {
        event: RuleTargetInput.fromEventPath('$.detail'),
        retryAttempts: 20,
        maxEventAge: Duration.hours(24),
        deadLetterQueue: this.deadLetterQueue,
      }),
    );
  }
}
