/**
 * An SNS topic for the alarms, encrypted with its own KMS key (CloudWatch cannot publish to
 * a topic under the AWS managed SNS key, whose policy does not let CloudWatch use it),
 * publishers held to TLS, and optionally an email address subscribed.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  /**
   * Subscribed to the topic (the address must confirm the subscription).
   * @default - no subscription
   */
  readonly email?: string;
}

export class AlarmTopic extends Construct {
  public readonly topic: Topic;
  public readonly key: Key;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'async-mcp: encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.topic = new Topic(this, 'Topic', { displayName: 'async-mcp alarms', masterKey: this.key, enforceSSL: true });
    // CloudWatch encrypts each alarm notification it publishes with the topic's key.
    this.key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
  }
}
