/**
 * Operation events in the template: the status-sync role may put events on the bus the stack
 * is given (the default bus unless `eventBus`), on that bus's ARN only, and the function is
 * told which bus; no other role may put events.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { ENV } from '../../lambdas/handlers/environment.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import { AsyncMcpServer } from '../../cdk/async-mcp-server.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { bareApp, logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every policy statement granting events:*, with the roles it is attached to. */
function eventStatements(template: Template): Array<{ roles: unknown; statement: Statement }> {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument.Statement as Statement[])
      .filter((statement) => asArray(statement.Action).some((action) => action.startsWith('events:')))
      .map((statement) => ({ roles: policy.Properties.Roles, statement })),
  );
}

const DEFAULT_BUS_ARN = {
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':events:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':event-bus/default']],
};

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;
beforeAll(async () => {
  tools = await repoTools();
  ({ stack, template } = synthTemplate(tools));
});

describe('operation events in the template', () => {
  it('the status-sync role may events:PutEvents on the default bus ARN only, and no other role may put events', () => {
    const granted = eventStatements(template);
    expect(granted).toEqual([
      {
        roles: [{ Ref: logicalIdOf(stack.server.statusSync!.function.role) }],
        statement: { Effect: 'Allow', Action: 'events:PutEvents', Resource: DEFAULT_BUS_ARN },
      },
    ]);
    const fn = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.statusSync!.function.function)]!;
    expect(fn.Properties.Environment.Variables[ENV.eventBusName]).toEqual(DEFAULT_BUS_ARN);
    const mcp = resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(stack.server.mcpFunction)]!;
    expect(mcp.Properties.Environment.Variables[ENV.eventBusName]).toBeUndefined();
  });

  it('with the eventBus prop, the grant and the function name that bus, not the default one', () => {
    const app = bareApp({ context: { 'aws:cdk:bundling-stacks': [] } });
    const host = new Stack(app, 'Host');
    const bus = new EventBus(host, 'Jobs', { eventBusName: 'jobs' });
    const server = new AsyncMcpServer(host, 'Server', { tools, eventBus: bus });
    const synthesized = CdkTemplate.fromStack(host);
    const busArn = { 'Fn::GetAtt': [logicalIdOf(bus), 'Arn'] };
    expect(eventStatements(synthesized).map(({ statement }) => statement)).toEqual([{ Effect: 'Allow', Action: 'events:PutEvents', Resource: busArn }]);
    const fn = resourcesOf(synthesized, 'AWS::Lambda::Function')[logicalIdOf(server.statusSync!.function.function)]!;
    expect(fn.Properties.Environment.Variables[ENV.eventBusName]).toEqual(busArn);
  });

  it('the app takes the bus by name or ARN from the eventBus context value', () => {
    const busFrom = (context: Record<string, unknown>) => readAppSettings(bareApp({ context }).node).eventBus;
    expect(busFrom({})).toBeUndefined();
    expect(busFrom({ eventBus: 'jobs' })).toBe('jobs');
    const arn = 'arn:aws:events:eu-west-1:123456789012:event-bus/central';
    expect(busFrom({ eventBus: arn })).toBe(arn);
    expect(() => busFrom({ eventBus: 'not a bus!' })).toThrow(/Invalid context "eventBus": expected an event bus name or ARN/);

    const { stack: byArn, template: arnTemplate } = synthTemplate(tools, { eventBusName: arn });
    expect(eventStatements(arnTemplate).map(({ statement }) => statement.Resource)).toEqual([arn]);
    expect(byArn.server.eventBus.eventBusArn).toBe(arn);
    const { template: byName } = synthTemplate(tools, { eventBusName: 'jobs' });
    expect(JSON.stringify(eventStatements(byName)[0]!.statement.Resource)).toContain(':event-bus/jobs');
  });
});
