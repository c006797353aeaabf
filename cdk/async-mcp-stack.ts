/** The stack this repository deploys: one AsyncMcpServer and its outputs. */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AsyncMcpServer, type AsyncMcpServerProps } from './async-mcp-server.ts';

export interface AsyncMcpStackProps extends StackProps, AsyncMcpServerProps {}

export class AsyncMcpStack extends Stack {
  public readonly server: AsyncMcpServer;

  constructor(scope: Construct, id: string, props: AsyncMcpStackProps) {
    super(scope, id, props);
    this.server = new AsyncMcpServer(this, 'Server', props);

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
    if (this.server.statusSync) {
      new CfnOutput(this, 'StatusSyncDeadLetterQueueUrl', {
        description: 'Status changes that could not be written; empty in normal operation',
        value: this.server.statusSync.deadLetterQueue.queueUrl,
      });
    }
  }
}
