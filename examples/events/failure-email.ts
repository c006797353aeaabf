/**
 * Recipe: an email when one tool fails. An EventBridge rule on the server's bus matches the
 * `Operation Status Changed` events of that tool that finished as an error (a tool failure, a
 * failed run or a protocol error) and sends a short message to an SNS topic with an email
 * subscription. The message names the operation and its status; it cannot hold the result,
 * which no event carries.
 */
import { Duration } from 'aws-cdk-lib';
import { EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { AsyncMcpServer } from '../../cdk/async-mcp-server.ts';

export interface FailureEmailProps {
  /** The server whose events to watch (its `eventBus`). */
  readonly server: AsyncMcpServer;
  /** The tool whose failures to report. */
  readonly tool: string;
  /** Who is told. */
  readonly email: string;
}

export class FailureEmail extends Construct {
  public readonly topic: Topic;
  public readonly rule: Rule;

  constructor(scope: Construct, id: string, props: FailureEmailProps) {
    super(scope, id);
    // The AWS-managed SNS key: EventBridge may publish to a topic encrypted with it.
    this.topic = new Topic(this, 'Topic', { masterKey: Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'), enforceSSL: true });
    this.topic.addSubscription(new EmailSubscription(props.email));
    this.rule = new Rule(this, 'Rule', {
      description: `async-mcp: ${props.tool} finished with an error`,
      eventBus: props.server.eventBus,
      eventPattern: {
        source: ['async-mcp'],
        detailType: ['Operation Status Changed'],
        detail: { tool: [props.tool], isError: [true] },
      },
    });
    this.rule.addTarget(
      new SnsTopic(this.topic, {
        message: RuleTargetInput.fromText(
          `${props.tool} failed: operation ${EventField.fromPath('$.detail.operationId')} is ${EventField.fromPath('$.detail.status')} ` +
            `(${EventField.fromPath('$.detail.statusMessage')}), finished at ${EventField.fromPath('$.detail.completedAt')}.`,
        ),
        retryAttempts: 8,
        maxEventAge: Duration.hours(2),
      }),
    );
  }
}
