/**
 * Observability in the synthesized template (issue 14): the dashboard graphs the AWS and the
 * custom metrics, each alarm watches its metric with its threshold, the alarms notify a topic
 * only when one is given, every function carries the Powertools names, and tracing stays opt-in.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { METRICS_NAMESPACE } from '../../lambdas/observability/emf-metrics.ts';
import { METRIC } from '../../lambdas/observability/metrics-recorder.ts';
import { SERVICE_NAME } from '../../lambdas/observability/structured-logger.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { TABLE_OPERATIONS } from '../../cdk/observability.ts';
import { MACHINES_PER_GROUPED_ALARM, MAX_ALARMS_PER_MACHINE, OperationsAlarms } from '../../cdk/operations-alarms.ts';
import { bareApp, buildStack, deployedTemplate, logicalIdOf, repoTools, resourcesOf, synthTemplate, testApp } from './cdk-test-app.ts';

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;

beforeAll(async () => {
  tools = await repoTools();
  ({ stack, template } = synthTemplate(tools));
});

const ref = (construct: Parameters<typeof logicalIdOf>[0]) => ({ Ref: logicalIdOf(construct) });
const alarms = (of: Template = template) => Object.values(resourcesOf(of, 'AWS::CloudWatch::Alarm'));

/** The dashboard body as JSON, each CloudFormation reference written as `<<LogicalId>>` (or `<<LogicalId.Attribute>>`). */
function dashboardBody(of: Template): { widgets: Array<{ type: string; properties: { title?: string; metrics?: unknown[][]; alarms?: unknown[] } }> } {
  const [dashboard] = Object.values(resourcesOf(of, 'AWS::CloudWatch::Dashboard'));
  const body = dashboard!.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string'
      ? body
      : body['Fn::Join'][1]
          .map((part) => {
            if (typeof part === 'string') return part;
            const { Ref, 'Fn::GetAtt': getAtt } = part as { Ref?: string; 'Fn::GetAtt'?: string[] };
            return `<<${Ref ?? getAtt!.join('.')}>>`;
          })
          .join('');
  return JSON.parse(text) as ReturnType<typeof dashboardBody>;
}

/** Every metric row of every graph: `[namespace, name, ...dimension pairs, options]` or `[{ expression }]`. */
function graphedMetrics(of: Template): unknown[][] {
  return dashboardBody(of).widgets.flatMap((widget) => widget.properties.metrics ?? []);
}

function metricRow(namespace: string, name: string, dimensions: Record<string, string>) {
  return expect.arrayContaining([namespace, name, ...Object.entries(dimensions).flat()]);
}

describe('dashboard', () => {
  it('is one per stack, and the stack outputs its name and console URL', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const dashboardId = logicalIdOf(stack.server.dashboard);
    template.hasOutput('DashboardName', { Value: { Ref: dashboardId } });
    const url = JSON.stringify(template.findOutputs('DashboardUrl'));
    expect(url).toContain('#dashboards/dashboard/');
    expect(url).toContain(dashboardId);
  });

  it('graphs the MCP Lambda: invocations, errors, throttles, duration p50 and p99, concurrency', () => {
    const mcp = `<<${logicalIdOf(stack.server.mcpFunction)}>>`;
    const rows = graphedMetrics(template);
    for (const name of ['Invocations', 'Errors', 'Throttles', 'ConcurrentExecutions']) {
      expect(rows, name).toContainEqual(metricRow('AWS/Lambda', name, { FunctionName: mcp }));
    }
    for (const stat of ['p50', 'p99']) {
      expect(rows, stat).toContainEqual([...['AWS/Lambda', 'Duration', 'FunctionName', mcp], expect.objectContaining({ stat })]);
    }
  });

  it('graphs status sync (invocations, errors, duration) and its dead-letter queue depth', () => {
    const statusSync = stack.server.statusSync!;
    const fn = `<<${logicalIdOf(statusSync.function.function)}>>`;
    const rows = graphedMetrics(template);
    for (const name of ['Invocations', 'Errors', 'Duration']) expect(rows, name).toContainEqual(metricRow('AWS/Lambda', name, { FunctionName: fn }));
    expect(rows).toContainEqual(
      metricRow('AWS/SQS', 'ApproximateNumberOfMessagesVisible', { QueueName: `<<${logicalIdOf(statusSync.deadLetterQueue)}.QueueName>>` }),
    );
  });

  it('graphs the table: consumed read and write capacity, and throttled requests of every operation the server calls', () => {
    const table = `<<${logicalIdOf(stack.server.operations.table)}>>`;
    const rows = graphedMetrics(template);
    expect(rows).toContainEqual(metricRow('AWS/DynamoDB', 'ConsumedReadCapacityUnits', { TableName: table }));
    expect(rows).toContainEqual(metricRow('AWS/DynamoDB', 'ConsumedWriteCapacityUnits', { TableName: table }));
    for (const operation of TABLE_OPERATIONS) {
      expect(rows, operation).toContainEqual(metricRow('AWS/DynamoDB', 'ThrottledRequests', { TableName: table, Operation: operation }));
    }
  });

  it('graphs each deployed state machine: executions started, succeeded, failed, timed out and aborted', () => {
    expect(stack.server.toolStateMachines.size).toBe(tools.filter((tool) => !tool.durable).length);
    const rows = graphedMetrics(template);
    for (const [tool, machine] of stack.server.toolStateMachines) {
      // Named by an ARN built from the machine's name: no output per machine from its nested stack.
      const arn = `arn:<<AWS::Partition>>:states:<<AWS::Region>>:<<AWS::AccountId>>:stateMachine:${machine.stateMachineName}`;
      for (const name of ['ExecutionsStarted', 'ExecutionsSucceeded', 'ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionsAborted']) {
        expect(rows, `${tool} ${name}`).toContainEqual(metricRow('AWS/States', name, { StateMachineArn: arn }));
      }
    }
  });

  it('searches the custom metrics over the dimension sets the functions write ({service,tool,dialect}, {service,dialect}, {service,tool})', () => {
    const expressions = graphedMetrics(template)
      .map((row) => (row[0] as { expression?: string }).expression)
      .filter((expression): expression is string => typeof expression === 'string');
    const search = (name: string, dimensions: string) =>
      `SEARCH('{${METRICS_NAMESPACE},${dimensions}} MetricName="${name}" service="${SERVICE_NAME}"', 'Sum', 300)`;
    for (const name of [METRIC.started, METRIC.completed, METRIC.failed, METRIC.cancelled]) {
      expect(expressions, name).toContain(search(name, 'service,tool,dialect'));
    }
    expect(expressions).toContain(search(METRIC.polls, 'service,dialect'));
    expect(expressions).toContain(search(METRIC.inputRequired, 'service,tool'));
    // One line per tool and dialect, each named by them.
    expect(graphedMetrics(template)).toContainEqual([
      { expression: search(METRIC.started, 'service,tool,dialect'), label: "Started ${PROP('Dim.tool')} ${PROP('Dim.dialect')}" },
    ]);
    // StatusSyncLag has `service` alone, so it is a plain metric: its percentiles.
    for (const stat of ['p50', 'p99']) {
      expect(graphedMetrics(template)).toContainEqual([METRICS_NAMESPACE, METRIC.statusSyncLag, 'service', SERVICE_NAME, expect.objectContaining({ stat })]);
    }
  });

  it('shows the state of every alarm', () => {
    const shown = dashboardBody(template).widgets.find((widget) => widget.type === 'alarm')!.properties.alarms!;
    // Every alarm of the template, the webhook delivery dead-letter alarm beside the operations alarms.
    const every = Object.keys(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((id) => `<<${id}.Arn>>`);
    expect([...shown].sort()).toEqual(every.sort());
    for (const alarm of stack.server.alarms.all) expect(shown).toContain(`<<${logicalIdOf(alarm)}.Arn>>`);
  });
});

describe('alarms', () => {
  const fires = { Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' };

  it('fire when the status-sync dead-letter queue holds any message, saying how to inspect and replay, and the stack names the queue and the function', () => {
    const queue = stack.server.statusSync!.deadLetterQueue;
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ...fires,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Statistic: 'Maximum',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(queue), 'QueueName'] } }],
      AlarmDescription: Match.stringLikeRegexp('dead-letter queue.*reconciles.*replay.*StatusSyncFunctionName'),
    });
    template.hasOutput('StatusSyncDeadLetterQueueUrl', { Value: ref(queue) });
    template.hasOutput('StatusSyncFunctionName', { Value: ref(stack.server.statusSync!.function.function) });
  });

  it('fire on any status-sync error in 5 minutes', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ...fires,
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Statistic: 'Sum',
      Period: 300,
      Dimensions: [{ Name: 'FunctionName', Value: ref(stack.server.statusSync!.function.function) }],
      AlarmDescription: Match.stringLikeRegexp('status-sync threw'),
    });
  });

  it("fire when more than 10% of a state machine's executions fail or time out in 15 minutes, one per deployed machine, aborts not counted", () => {
    const rateAlarms = alarms().filter((alarm) => JSON.stringify(alarm.Properties.Metrics ?? []).includes('ExecutionsStarted'));
    expect(rateAlarms).toHaveLength(stack.server.toolStateMachines.size);
    for (const [tool, machine] of stack.server.toolStateMachines) {
      const arn = ref(machine.stateMachine);
      const stat = (name: string) =>
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: { Namespace: 'AWS/States', MetricName: name, Dimensions: [{ Name: 'StateMachineArn', Value: arn }] },
            Period: 900,
            Stat: 'Sum',
          }),
          ReturnData: false,
        });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Threshold: 10,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmDescription: Match.stringLikeRegexp(`tool "${tool}" failed or timed out`),
        Metrics: Match.arrayWith([
          Match.objectLike({
            Expression: Match.stringLikeRegexp('100 \\* \\(FILL\\(failed, 0\\) \\+ FILL\\(timedOut, 0\\)\\) / FILL\\(started, 0\\)'),
            ReturnData: true,
          }),
          stat('ExecutionsStarted'),
          stat('ExecutionsFailed'),
          stat('ExecutionsTimedOut'),
        ]),
      });
    }
    expect(JSON.stringify(rateAlarms)).not.toContain('ExecutionsAborted');
  });

  it('fire on any throttle of the MCP, status-sync, worker and webhook delivery Lambdas, one alarm each', () => {
    const functions = [
      stack.server.mcpFunction,
      stack.server.statusSync!.function.function,
      ...stack.server.workerFunctions.values(),
      stack.server.events.deliveryFunction!.function,
    ];
    const throttleAlarms = alarms().filter((alarm) => alarm.Properties.MetricName === 'Throttles');
    expect(throttleAlarms).toHaveLength(functions.length);
    for (const fn of functions) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        ...fires,
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Statistic: 'Sum',
        Dimensions: [{ Name: 'FunctionName', Value: ref(fn) }],
        AlarmDescription: Match.stringLikeRegexp('throttled'),
      });
    }
  });

  it('fire on any throttled request to the operations table, summing every operation with gaps filled', () => {
    const table = ref(stack.server.operations.table);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      ...fires,
      AlarmDescription: Match.stringLikeRegexp('DynamoDB throttled'),
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: TABLE_OPERATIONS.map((op) => `FILL(${op.charAt(0).toLowerCase()}${op.slice(1)}, 0)`).join(' + '), ReturnData: true }),
        ...TABLE_OPERATIONS.map((operation) =>
          Match.objectLike({
            MetricStat: Match.objectLike({
              Metric: {
                Namespace: 'AWS/DynamoDB',
                MetricName: 'ThrottledRequests',
                Dimensions: Match.arrayWith([
                  { Name: 'Operation', Value: operation },
                  { Name: 'TableName', Value: table },
                ]),
              },
            }),
          }),
        ),
      ]),
    });
  });

  it('are exactly these, each with a description of what it means and what to do, and without a topic no actions', () => {
    // Status sync's 2, a failure rate per state machine and durable function, the throttles of MCP, status sync and each worker, the table's.
    const expected = 2 + stack.server.toolStateMachines.size + stack.server.durableToolFunctions.size + 2 + stack.server.workerFunctions.size + 1;
    expect(stack.server.alarms.all).toHaveLength(expected);
    // Beside those, the Events construct's own: the webhook delivery dead-letter queue, and the
    // delivery function's errors, throttles and backlog.
    expect(stack.server.events.deadLetterAlarm).toBeDefined();
    expect(Object.keys(stack.server.events.deliveryAlarms!)).toEqual(['errors', 'throttles', 'backlog']);
    template.resourceCountIs('AWS::CloudWatch::Alarm', expected + 4);
    for (const alarm of alarms()) {
      expect(alarm.Properties.AlarmDescription).toMatch(/^async-mcp: .+ To do: /);
      expect((alarm.Properties.AlarmDescription as string).length).toBeLessThanOrEqual(1024);
      expect(alarm.Properties.AlarmActions).toBeUndefined();
      expect(alarm.Properties.OKActions).toBeUndefined();
    }
  });

  it('take the failure-rate threshold from executionFailureRatePercent and refuse one that is no percentage', () => {
    const strict = synthTemplate(tools, { executionFailureRatePercent: 2 }).template;
    const thresholds = alarms(strict)
      .filter((alarm) => JSON.stringify(alarm.Properties.Metrics ?? []).includes('ExecutionsStarted'))
      .map((alarm) => alarm.Properties.Threshold as number);
    expect(new Set(thresholds)).toEqual(new Set([2]));
    expect(() => synthTemplate(tools, { executionFailureRatePercent: 0 })).toThrow(/executionFailureRatePercent/);
    expect(() => synthTemplate(tools, { executionFailureRatePercent: 101 })).toThrow(/executionFailureRatePercent/);
  });
});

describe('failure-rate alarms of a stack with many tools', () => {
  function alarmsFor(machineCount: number): Template {
    const scope = new Stack(testApp(), 'Many');
    const stateMachines = new Map(
      Array.from({ length: machineCount }, (_, i) => {
        const tool = `tool_${String(i).padStart(3, '0')}`;
        return [tool, StateMachine.fromStateMachineArn(scope, tool, `arn:aws:states:us-east-1:123456789012:stateMachine:${tool}`)] as const;
      }),
    );
    new OperationsAlarms(scope, 'Alarms', {
      mcpFunction: LambdaFunction.fromFunctionArn(scope, 'Mcp', 'arn:aws:lambda:us-east-1:123456789012:function:mcp'),
      workerFunctions: new Map(),
      table: Table.fromTableName(scope, 'Table', 'operations'),
      stateMachines,
    });
    return Template.fromStack(scope);
  }
  const rateAlarmsOf = (of: Template) => alarms(of).filter((alarm) => JSON.stringify(alarm.Properties.Metrics ?? []).includes('ExecutionsStarted'));

  it(`are one per state machine up to ${MAX_ALARMS_PER_MACHINE} machines`, () => {
    expect(rateAlarmsOf(alarmsFor(MAX_ALARMS_PER_MACHINE))).toHaveLength(MAX_ALARMS_PER_MACHINE);
  });

  it(`beyond that, watch ${MACHINES_PER_GROUPED_ALARM} machines each (the highest rate), within 10 metrics and naming every tool, so 100 tools fit in one stack`, () => {
    const count = MAX_ALARMS_PER_MACHINE + 1;
    const grouped = rateAlarmsOf(alarmsFor(count));
    expect(grouped).toHaveLength(Math.ceil(count / MACHINES_PER_GROUPED_ALARM));
    const watched = grouped.flatMap((alarm) => {
      const metrics = alarm.Properties.Metrics as Array<{
        Id: string;
        Expression?: string;
        ReturnData: boolean;
        MetricStat?: { Metric: { MetricName: string; Dimensions: Array<{ Value: string }> } };
      }>;
      const stats = metrics.filter((metric) => metric.MetricStat);
      expect(stats.length).toBeLessThanOrEqual(10);
      expect(new Set(metrics.map((metric) => metric.Id)).size).toBe(metrics.length);
      const top = metrics.find((metric) => metric.ReturnData)!;
      const machines = [...new Set(stats.map((stat) => stat.MetricStat!.Metric.Dimensions[0]!.Value))];
      if (machines.length > 1) expect(top.Expression).toMatch(/^MAX\(\[rate0, rate1(, rate2)?\]\)$/);
      for (const arn of machines) expect(alarm.Properties.AlarmDescription).toContain(`"${arn.split(':').at(-1)}"`);
      return machines;
    });
    expect(watched).toHaveLength(count);
    expect(new Set(watched).size).toBe(count);
  });
});

describe('alarm notifications', () => {
  it('with alarmTopic, every alarm notifies it on ALARM and on OK', () => {
    const app = testApp();
    const topicArn = 'arn:aws:sns:us-east-1:123456789012:ops-alarms';
    const alarmTopic = Topic.fromTopicArn(new Stack(app, 'Shared'), 'Ops', topicArn);
    const withTopic = deployedTemplate(buildStack(app, tools, { alarmTopic }));
    const all = alarms(withTopic);
    expect(all.length).toBeGreaterThan(5);
    for (const alarm of all) {
      expect(alarm.Properties.AlarmActions).toEqual([topicArn]);
      expect(alarm.Properties.OKActions).toEqual([topicArn]);
    }
  });

  it('with alarmEmail, the stack creates a KMS-encrypted, TLS-only topic that CloudWatch may publish to, subscribes the address, and every alarm notifies it', () => {
    const app = testApp();
    const emailed = buildStack(app, tools, { alarmEmail: 'ops@example.com' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    const withEmail = deployedTemplate(emailed);
    withEmail.resourceCountIs('AWS::SNS::Topic', 1);
    const [topicId] = Object.keys(resourcesOf(withEmail, 'AWS::SNS::Topic'));
    withEmail.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    withEmail.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    withEmail.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      }),
    });
    withEmail.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: Match.arrayWith(['kms:Decrypt', 'kms:GenerateDataKey*']) }),
        ]),
      }),
    });
    withEmail.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
    for (const alarm of alarms(withEmail)) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
    expect(new AwsSolutionsChecks().validateScope(app)).toEqual({ success: true, violations: [] });
  });

  it('alarmEmail comes from context (-c alarmEmail=...), and a value that is no address fails the synth', () => {
    const settings = (context: Record<string, unknown>) => readAppSettings(bareApp({ context }).node);
    expect(settings({ alarmEmail: 'ops@example.com' }).alarmEmail).toBe('ops@example.com');
    expect(settings({})).not.toHaveProperty('alarmEmail');
    expect(() => settings({ alarmEmail: 'ops' })).toThrow(/Invalid context "alarmEmail"/);
  });
});

describe('functions', () => {
  it('all carry the Powertools service name and metrics namespace the dashboard searches for', () => {
    const functions = Object.entries(resourcesOf(template, 'AWS::Lambda::Function'));
    // MCP, status sync, webhook delivery, the workers and the durable tools.
    expect(functions.length).toBe(3 + stack.server.workerFunctions.size + stack.server.durableToolFunctions.size);
    for (const [id, fn] of functions) {
      expect(fn.Properties.Environment?.Variables, id).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'async-mcp', POWERTOOLS_METRICS_NAMESPACE: 'AsyncMcp' });
    }
  });

  it('are not traced with X-Ray unless the tracing prop asks (nor are the state machines)', () => {
    template.allResourcesProperties('AWS::Lambda::Function', { TracingConfig: Match.absent() });
    for (const machine of Object.values(resourcesOf(template, 'AWS::StepFunctions::StateMachine'))) {
      expect(machine.Properties.TracingConfiguration?.Enabled ?? false).toBe(false);
    }
  });
});
