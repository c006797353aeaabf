/**
 * Both recipes on the stack this repository deploys: an email when `run_test_suite` fails, and
 * every finished operation POSTed to a webhook. Build it in your own CDK app:
 * `new EventsRecipesStack(app, 'AsyncMcpWithEvents', { tools: await loadToolFolders('state-machines'), ... })`.
 */
import { SecretValue } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AsyncMcpStack, type AsyncMcpStackProps } from '../../cdk/async-mcp-stack.ts';
import { CompletionWebhook } from './completion-webhook.ts';
import { FailureEmail } from './failure-email.ts';

export interface EventsRecipesStackProps extends AsyncMcpStackProps {
  readonly failureEmail: string;
  readonly webhookUrl: string;
  /** A Secrets Manager secret holding the webhook's token. */
  readonly webhookTokenSecretName: string;
}

export class EventsRecipesStack extends AsyncMcpStack {
  constructor(scope: Construct, id: string, props: EventsRecipesStackProps) {
    super(scope, id, props);
    new FailureEmail(this, 'TestSuiteFailures', { server: this.server, tool: 'run_test_suite', email: props.failureEmail });
    new CompletionWebhook(this, 'CompletionWebhook', {
      server: this.server,
      url: props.webhookUrl,
      token: SecretValue.secretsManager(props.webhookTokenSecretName),
    });
  }
}
