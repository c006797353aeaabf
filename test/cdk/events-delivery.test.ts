/**
 * The Events extension in the CDK app (issue 29, "In AWS"): webhook delivery off the request
 * path through an SQS queue (SSE, TLS only) consumed by a delivery function with partial-batch
 * failures and a maximum concurrency, a dead-letter queue with an alarm, least-privilege grants,
 * the settings as environment variables of every function that serves or records events, and
 * the context keys that set them.
 */
import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { REPORT_PROGRESS_WORKER } from '../../lambdas/tools/report-progress-states.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { bareApp, logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

function statementsOf(template: Template, role: IConstruct): Statement[] {
  const roleId = logicalIdOf(role);
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

function environmentOf(template: Template, fn: IConstruct): Record<string, unknown> {
  return resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(fn)]?.Properties.Environment?.Variables ?? {};
}

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;
beforeAll(async () => {
  tools = await repoTools();
  ({ stack, template } = synthTemplate(tools));
});

describe('webhook delivery in AWS', () => {
  it('queues jobs on an encrypted, TLS-only queue that dead-letters after the delivery retries and a margin', () => {
    const events = stack.server.events;
    expect(events.queue && events.deadLetterQueue && events.deliveryFunction).toBeDefined();
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 360,
      MessageRetentionPeriod: 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [logicalIdOf(events.deadLetterQueue!), 'Arn'] }, maxReceiveCount: 8 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    for (const queue of [events.queue!, events.deadLetterQueue!]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: logicalIdOf(queue) }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('runs the delivery function from the queue, ten jobs a batch, reporting failed items, at most ten batches at once', () => {
    const events = stack.server.events;
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(events.deliveryFunction!.function) },
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(events.queue!), 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    expect(environmentOf(template, events.deliveryFunction!.function)).toMatchObject({
      [ENV.tableName]: { Ref: logicalIdOf(stack.server.operations.table) },
      [ENV.secretArn]: { Ref: logicalIdOf(stack.server.serverKey.secret) },
      [ENV.eventsDeliveryQueueUrl]: { Ref: logicalIdOf(events.queue!) },
      [ENV.events]: '1',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Timeout: 60,
      MemorySize: 256,
      Description: Match.stringLikeRegexp('webhook delivery'),
    });
  });

  it('raises an alarm when the dead-letter queue holds a job', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(stack.server.events.deadLetterQueue!), 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmDescription: Match.stringLikeRegexp('webhook delivery dead-letter queue'),
    });
  });

  it('raises alarms when the delivery function throws, is throttled, or falls behind its queue', () => {
    const fn = { Name: 'FunctionName', Value: { Ref: logicalIdOf(stack.server.events.deliveryFunction!.function) } };
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [fn],
      Threshold: 0,
      AlarmDescription: Match.stringLikeRegexp('webhook delivery function threw'),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: [fn],
      Threshold: 0,
      AlarmDescription: Match.stringLikeRegexp('throttled the webhook delivery function'),
    });
    // Past the retries' own backoff (30 s doubling over 5 attempts: 450 s), a waiting job means deliveries fall behind.
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(stack.server.events.queue!), 'QueueName'] } }],
      Threshold: 900,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('tells the alarm topic, when there is one, on ALARM and on OK', () => {
    const { stack: withTopic, template: withTopicTemplate } = synthTemplate(tools, { alarmEmail: 'ops@example.com' });
    const alarm = resourcesOf(withTopicTemplate, 'AWS::CloudWatch::Alarm')[logicalIdOf(withTopic.server.events.deadLetterAlarm!)];
    const [topic] = Object.keys(resourcesOf(withTopicTemplate, 'AWS::SNS::Topic'));
    expect(alarm?.Properties.AlarmActions).toEqual([{ Ref: topic }]);
    expect(alarm?.Properties.OKActions).toEqual([{ Ref: topic }]);
    for (const delivery of Object.values(withTopic.server.events.deliveryAlarms!)) {
      const each = resourcesOf(withTopicTemplate, 'AWS::CloudWatch::Alarm')[logicalIdOf(delivery)];
      expect(each?.Properties.AlarmActions).toEqual([{ Ref: topic }]);
      expect(each?.Properties.OKActions).toEqual([{ Ref: topic }]);
    }
  });

  it('lets the delivery function consume its queue and touch subscription and event items only', () => {
    const events = stack.server.events;
    const statements = statementsOf(template, events.deliveryFunction!.role);
    const sqs = statements.filter((s) => asArray(s.Action).some((action) => action.startsWith('sqs:')));
    expect(sqs.flatMap((s) => asArray(s.Action)).sort()).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    expect(sqs.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [logicalIdOf(events.queue!), 'Arn'] }]);
    const dynamo = statements.filter((s) => asArray(s.Action).some((action) => action.startsWith('dynamodb:')));
    expect(dynamo.length).toBeGreaterThan(0);
    for (const statement of dynamo) {
      expect(statement.Resource).toEqual({ 'Fn::GetAtt': [logicalIdOf(stack.server.operations.table), 'Arn'] });
      expect(statement.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': expect.any(Array) } });
    }
    const writes = dynamo.filter((s) => asArray(s.Action).some((action) => action !== 'dynamodb:GetItem'));
    expect(writes.map((s) => (s.Condition as Record<string, Record<string, unknown>>)['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'])).toEqual([
      ['SUB#*'],
    ]);
    expect(statements.flatMap((s) => asArray(s.Action))).toContain('secretsmanager:GetSecretValue');
  });

  it('lets the MCP function, status sync and report_progress send to the queue, and gives them its URL; nobody else', () => {
    const events = stack.server.events;
    const queueArn = { 'Fn::GetAtt': [logicalIdOf(events.queue!), 'Arn'] };
    const senders = [stack.server.mcpFunction, stack.server.statusSync!.function.function, stack.server.workerFunctions.get(REPORT_PROGRESS_WORKER)!];
    for (const fn of senders) {
      const sends = statementsOf(template, fn.role!).filter(
        (s) => asArray(s.Action).includes('sqs:SendMessage') && JSON.stringify(s.Resource) === JSON.stringify(queueArn),
      );
      expect(
        sends.map((s) => asArray(s.Action)),
        fn.node.path,
      ).toEqual([['sqs:SendMessage']]);
      expect(JSON.stringify(environmentOf(template, fn)[ENV.eventsDeliveryQueueUrl]), fn.node.path).toContain(logicalIdOf(events.queue!));
      expect(environmentOf(template, fn)).toMatchObject({ [ENV.events]: '1', [ENV.eventsRetentionHours]: '24', [ENV.eventsMaxSubscriptionTtlSeconds]: '3600' });
    }
    const receivers = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[]).some(
        (s) => asArray(s.Action).includes('sqs:ReceiveMessage') && JSON.stringify(s.Resource) === JSON.stringify(queueArn),
      ),
    );
    expect(receivers.map((policy) => policy.Properties.Roles)).toEqual([[{ Ref: logicalIdOf(events.deliveryFunction!.role) }]]);
  });

  it('lets status sync and report_progress append event items alone, and query the owner index for subscriptions', () => {
    for (const fn of [stack.server.statusSync!.function.function, stack.server.workerFunctions.get(REPORT_PROGRESS_WORKER)!]) {
      const puts = statementsOf(template, fn.role!).filter((s) => asArray(s.Action).includes('dynamodb:PutItem'));
      expect(puts, fn.node.path).toEqual([expect.objectContaining({ Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVT#*'] } } })]);
      expect(statementsOf(template, fn.role!).some((s) => asArray(s.Action).includes('dynamodb:Query'))).toBe(true);
    }
  });

  it('names the queues and the function in the outputs', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const values = Object.entries(outputs).filter(([name]) => /Events(DeliveryQueueUrl|DeadLetterQueueUrl|DeliveryFunctionName)/.test(name));
    expect(values).toHaveLength(3);
  });
});

describe('events settings', () => {
  it('sets what the props ask on every function that serves or records events, and the delivery concurrency', () => {
    const { stack: tuned, template: tunedTemplate } = synthTemplate(tools, {
      events: { retentionHours: 72, maxSubscriptionTtl: Duration.hours(6), deliveryConcurrency: 50 },
    });
    for (const fn of [tuned.server.mcpFunction, tuned.server.statusSync!.function.function, tuned.server.events.deliveryFunction!.function]) {
      expect(environmentOf(tunedTemplate, fn), fn.node.path).toMatchObject({
        [ENV.events]: '1',
        [ENV.eventsRetentionHours]: '72',
        [ENV.eventsMaxSubscriptionTtlSeconds]: String(6 * 3600),
      });
    }
    tunedTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 50 } });
    tunedTemplate.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 72 * 3600, RedrivePolicy: Match.anyValue() });
  });

  it('turned off, deploys no queue or delivery function and tells the functions so', () => {
    const { stack: off, template: offTemplate } = synthTemplate(tools, { events: { enabled: false } });
    expect(off.server.events.queue).toBeUndefined();
    expect(Object.keys(resourcesOf(offTemplate, 'AWS::Lambda::EventSourceMapping'))).toEqual([]);
    // The status-sync dead-letter queue alone.
    expect(Object.keys(resourcesOf(offTemplate, 'AWS::SQS::Queue'))).toEqual([logicalIdOf(off.server.statusSync!.deadLetterQueue)]);
    for (const fn of [off.server.mcpFunction, off.server.statusSync!.function.function]) {
      expect(environmentOf(offTemplate, fn)[ENV.events]).toBe('0');
      expect(environmentOf(offTemplate, fn)[ENV.eventsDeliveryQueueUrl]).toBeUndefined();
    }
  });

  it.each([
    ['a TTL over a day', { maxSubscriptionTtl: Duration.hours(25) }, /maxSubscriptionTtl/],
    ['a concurrency under Lambda’s minimum of 2', { deliveryConcurrency: 1 }, /deliveryConcurrency/],
    ['a retention of no hours', { retentionHours: 0 }, /retentionHours/],
  ])('refuses %s, naming the setting', (_name, events, message) => {
    expect(() => synthTemplate(tools, { events })).toThrow(message);
  });

  it('reads the context keys, as CLI strings or cdk.json values; none leaves the construct its defaults', () => {
    const from = (context: Record<string, unknown>) => readAppSettings(bareApp({ context }).node).events;
    expect(from({})).toBeUndefined();
    expect(from({ events: 'false' })).toEqual({ enabled: false });
    expect(from({ events: true, eventsRetentionHours: '48', eventsMaxSubscriptionTtlSeconds: 7200, eventsDeliveryConcurrency: '20' })).toEqual({
      enabled: true,
      retentionHours: 48,
      maxSubscriptionTtl: Duration.seconds(7200),
      deliveryConcurrency: 20,
    });
    expect(() => from({ events: 'off' })).toThrow(/Invalid context "events"/);
    expect(() => from({ eventsDeliveryConcurrency: 'ten' })).toThrow(/Invalid context "eventsDeliveryConcurrency"/);
  });
});
