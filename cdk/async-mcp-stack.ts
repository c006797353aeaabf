/** The stack this repository deploys: one AsyncMcpServer, its alarm topic when asked, and its outputs. */
import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import { AlarmTopic } from './alarm-topic.ts';
import { AsyncMcpServer, type AsyncMcpServerProps } from './async-mcp-server.ts';

export interface AsyncMcpStackProps extends StackProps, AsyncMcpServerProps {
  /**
   * An email address told of every alarm: the stack creates an encrypted SNS topic with this
   * subscription and passes it as `alarmTopic`. Ignored when `alarmTopic` is given.
   * @default - no topic: the alarms show in CloudWatch only
   */
  readonly alarmEmail?: string;
  /**
   * The bus operation events go on, by name or ARN (the app's `eventBus` context value).
   * Ignored when `eventBus` is given.
   * @default - the account's default bus
   */
  readonly eventBusName?: string;
}

export class AsyncMcpStack extends Stack {
  public readonly server: AsyncMcpServer;

  constructor(scope: Construct, id: string, props: AsyncMcpStackProps) {
    super(scope, id, props);
    const alarmTopic = props.alarmTopic ?? (props.alarmEmail ? new AlarmTopic(this, 'AlarmTopic', { email: props.alarmEmail }).topic : undefined);
    const named = props.eventBusName;
    const eventBus =
      props.eventBus ??
      (named === undefined
        ? undefined
        : named.startsWith('arn:')
          ? EventBus.fromEventBusArn(this, 'EventBus', named)
          : EventBus.fromEventBusName(this, 'EventBus', named));
    this.server = new AsyncMcpServer(this, 'Server', { ...props, ...(alarmTopic ? { alarmTopic } : {}), ...(eventBus ? { eventBus } : {}) });

    new CfnOutput(this, 'McpUrl', {
      description: 'The MCP endpoint: the Function URL with the path the local server uses',
      value: `${this.server.functionUrl.url}mcp`,
    });
    new CfnOutput(this, 'McpAuth', {
      description: 'How callers authenticate to the MCP endpoint: iam (SigV4), oauth (bearer tokens checked by the Lambda) or none',
      value: this.server.auth.kind,
    });
    new CfnOutput(this, 'FunctionUrlAuthType', {
      description: 'The Function URL auth type (NONE with OAuth: the Lambda checks every token)',
      value: this.server.functionUrl.authType,
    });
    new CfnOutput(this, 'McpFunctionArn', {
      description:
        'The MCP Lambda: IAM callers need lambda:InvokeFunctionUrl, and lambda:InvokeFunction only with the condition lambda:InvokedViaFunctionUrl = true',
      value: this.server.mcpFunction.functionArn,
    });
    new CfnOutput(this, 'OperationsTableName', {
      description: 'DynamoDB table holding one record per operation',
      value: this.server.operations.tableName,
    });
    new CfnOutput(this, 'McpLogGroupName', {
      description: 'Log group of the MCP Lambda (aws logs tail <name> --follow)',
      value: this.server.mcpFunction.logGroup.logGroupName,
    });
    new CfnOutput(this, 'DashboardName', {
      description: 'The CloudWatch dashboard of the server',
      value: this.server.dashboard.dashboardName,
    });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'The CloudWatch dashboard in the console',
      value: `https://${Aws.REGION}.console.${Aws.URL_SUFFIX}/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${this.server.dashboard.dashboardName}`,
    });
    if (alarmTopic) {
      new CfnOutput(this, 'AlarmTopicArn', { description: 'The SNS topic every alarm notifies (ALARM and OK)', value: alarmTopic.topicArn });
    }
    if (this.server.statusSync) {
      new CfnOutput(this, 'OperationEventBusArn', {
        description: 'The EventBridge bus status sync puts Operation Status Changed events on (source async-mcp)',
        value: this.server.eventBus.eventBusArn,
      });
      new CfnOutput(this, 'StatusSyncDeadLetterQueueUrl', {
        description: 'Status changes that could not be written; empty in normal operation',
        value: this.server.statusSync.deadLetterQueue.queueUrl,
      });
      new CfnOutput(this, 'StatusSyncFunctionName', {
        description: 'The status-sync Lambda, to replay a dead-lettered status change to',
        value: this.server.statusSync.function.function.functionName,
      });
    }
  }
}
