/**
 * The recipes of docs/events.md (examples/events/) synthesize, and their rules select what they
 * say: the failure email the errors of one tool, the webhook every finished operation; each
 * on the server's bus, checked against events made the way status sync makes them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { operationEventDetail } from '../../lambdas/aws/operation-events.ts';
import type { OperationRecord, OperationStatus, Outcome } from '../../lambdas/operations/operation.ts';
import { matchesEventPattern, type EventPattern } from '../../local/events/event-pattern.ts';
import { EventsRecipesStack } from '../../examples/events/events-recipes-stack.ts';
import { logicalIdOf, repoTools, resourcesOf, testApp } from './cdk-test-app.ts';

let template: Template;
let stack: EventsRecipesStack;

beforeAll(async () => {
  const app = testApp();
  stack = new EventsRecipesStack(app, 'Recipes', {
    tools: await repoTools(),
    failureEmail: 'oncall@example.com',
    webhookUrl: 'https://hooks.example.com/async-mcp',
    webhookTokenSecretName: 'async-mcp-webhook-token',
  });
  template = Template.fromStack(stack);
});

/** An event as EventBridge delivers it, with the detail status sync would write for this record. */
function eventOf(tool: string, status: OperationStatus, outcome?: Outcome) {
  const record: OperationRecord = {
    ownerId: 'o',
    token: 't',
    tool,
    argumentsHash: 'h',
    dialect: 'tasks-2026-07-28',
    status,
    executionName: 'x',
    createdAt: 0,
    updatedAt: 1,
    ...(status === 'working' ? {} : { completedAt: 1 }),
    keepAliveSeconds: 60,
    pollIntervalSeconds: 5,
    ...(outcome ? { outcome } : {}),
  };
  return {
    version: '0',
    id: '1',
    source: 'async-mcp',
    'detail-type': 'Operation Status Changed',
    account: '1',
    time: 'x',
    region: 'r',
    resources: [],
    detail: operationEventDetail(record),
  };
}

function ruleOf(construct: Parameters<typeof logicalIdOf>[0]) {
  return resourcesOf(template, 'AWS::Events::Rule')[logicalIdOf(construct)]!.Properties as {
    EventPattern: EventPattern;
    EventBusName?: unknown;
    Targets: Array<{ Arn?: unknown; InputPath?: string; DeadLetterConfig?: { Arn: unknown } }>;
  };
}

const ok: Outcome = { kind: 'call-tool-result', result: { content: [] } };
const toolError: Outcome = { kind: 'call-tool-result', result: { content: [], isError: true } };

describe('the events recipes', () => {
  it('failure email: the errors of run_test_suite only, to an SNS topic with the email subscription', () => {
    const recipe = stack.node.findChild('TestSuiteFailures') as import('../../examples/events/failure-email.ts').FailureEmail;
    const rule = ruleOf(recipe.rule);
    expect(rule.EventBusName).toBe('default');
    expect(matchesEventPattern(rule.EventPattern, eventOf('run_test_suite', 'failed', { kind: 'tool-error', error: 'Boom' }))).toBe(true);
    expect(matchesEventPattern(rule.EventPattern, eventOf('run_test_suite', 'completed', toolError))).toBe(true);
    expect(matchesEventPattern(rule.EventPattern, eventOf('run_test_suite', 'completed', ok))).toBe(false);
    expect(matchesEventPattern(rule.EventPattern, eventOf('run_test_suite', 'working'))).toBe(false);
    expect(matchesEventPattern(rule.EventPattern, eventOf('analyze_dataset', 'failed', { kind: 'tool-error', error: 'Boom' }))).toBe(false);
    expect(rule.Targets[0]!.Arn).toEqual({ Ref: logicalIdOf(recipe.topic) });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });

  it('completion webhook: every finished operation, POSTed through an API destination whose connection holds the secret', () => {
    const recipe = stack.node.findChild('CompletionWebhook') as import('../../examples/events/completion-webhook.ts').CompletionWebhook;
    const rule = ruleOf(recipe.rule);
    for (const status of ['completed', 'failed', 'canceled'] as const)
      expect(matchesEventPattern(rule.EventPattern, eventOf('any', status)), status).toBe(true);
    expect(matchesEventPattern(rule.EventPattern, eventOf('any', 'working'))).toBe(false);
    const target = rule.Targets[0]!;
    expect(target.InputPath).toBe('$.detail');
    expect(target.DeadLetterConfig?.Arn).toEqual({ 'Fn::GetAtt': [logicalIdOf(recipe.deadLetterQueue), 'Arn'] });
    template.hasResourceProperties('AWS::Events::ApiDestination', { HttpMethod: 'POST', InvocationEndpoint: 'https://hooks.example.com/async-mcp' });
    const connections = Object.values(resourcesOf(template, 'AWS::Events::Connection'));
    expect(connections).toHaveLength(1);
    const connection = connections[0]!.Properties;
    expect(connection.AuthorizationType).toBe('API_KEY');
    expect(JSON.stringify(connection.AuthParameters)).toContain('async-mcp-webhook-token');
  });
});
