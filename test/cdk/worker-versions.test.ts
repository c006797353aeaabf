/**
 * Worker versions: a definition calls its workers' published versions, not their unqualified
 * ARNs, so an execution that started before a deploy keeps calling the code it started with
 * after it. Each deploy that changes a worker publishes a new version; the old ones stay
 * (retained) for the executions still using them, and the machines may invoke any of them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Template } from 'aws-cdk-lib/assertions';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { workerSubstitutionKey } from '../../lambdas/tools/worker-placeholders.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;

beforeAll(async () => {
  tools = (await repoTools()).filter((tool) => tool.workers.length > 0);
  ({ stack, template } = synthTemplate(tools));
});

const definitionOf = (of: AsyncMcpStack, template: Template, tool: string) =>
  resourcesOf(template, 'AWS::StepFunctions::StateMachine')[logicalIdOf(of.server.toolStateMachines.get(tool)!.stateMachine)]!.Properties;

describe('a worker a definition calls', () => {
  it('is one published version of the worker per deploy, retained when a later deploy replaces it', () => {
    expect(tools.length).toBeGreaterThan(0);
    const versions = resourcesOf(template, 'AWS::Lambda::Version');
    for (const [name, fn] of stack.server.workerFunctions) {
      const version = versions[logicalIdOf(fn.currentVersion)];
      expect(version, name).toBeDefined();
      expect(version!.Properties.FunctionName).toEqual({ Ref: logicalIdOf(fn) });
      // CloudFormation leaves a replaced version in Lambda: executions still running call it.
      expect(version!.DeletionPolicy, name).toBe('Retain');
      expect(version!.UpdateReplacePolicy, name).toBe('Retain');
    }
    // Only the workers publish versions: nothing calls the MCP and status-sync functions by version.
    expect(Object.keys(versions)).toHaveLength(stack.server.workerFunctions.size);
  });

  it('is substituted into the definition by its qualified ARN, never the unqualified one', () => {
    for (const tool of tools) {
      const substitutions = definitionOf(stack, template, tool.config.name).DefinitionSubstitutions as Record<string, unknown>;
      for (const worker of tool.workers) {
        const fn = stack.server.workerFunctions.get(worker)!;
        expect(substitutions[workerSubstitutionKey(worker)], `${tool.config.name} ${worker}`).toEqual({ Ref: logicalIdOf(fn.currentVersion) });
        expect(JSON.stringify(substitutions)).not.toContain(JSON.stringify({ 'Fn::GetAtt': [logicalIdOf(fn), 'Arn'] }));
      }
    }
  });

  it('changes version when its function changes, while the state machine may still invoke the version it replaced', () => {
    const changed = synthTemplate(tools, { workerMemorySize: 1024 });
    const [tool] = tools;
    const worker = tool!.workers[0]!;
    const before = definitionOf(stack, template, tool!.config.name).DefinitionSubstitutions[workerSubstitutionKey(worker)];
    const after = definitionOf(changed.stack, changed.template, tool!.config.name).DefinitionSubstitutions[workerSubstitutionKey(worker)];
    // A new version resource: the old one leaves the template, and Retain keeps it in Lambda.
    expect(after).not.toEqual(before);
    expect(logicalIdOf(changed.stack.server.workerFunctions.get(worker)!.currentVersion)).not.toBe(
      logicalIdOf(stack.server.workerFunctions.get(worker)!.currentVersion),
    );
    // The grant is on every version of the function (`<arn>:*`), the old one included, not on the new one alone.
    const machine = changed.stack.server.toolStateMachines.get(tool!.config.name)!.stateMachine;
    const roleId = logicalIdOf(machine.role);
    const invoked = Object.values(resourcesOf(changed.template, 'AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
      .filter((statement) => [statement.Action].flat().includes('lambda:InvokeFunction'))
      .flatMap((statement) => [statement.Resource].flat());
    const fn = changed.stack.server.workerFunctions.get(worker)!;
    expect(invoked).toContainEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(fn), 'Arn'] }, ':*']] });
    expect(invoked).not.toContainEqual({ 'Fn::GetAtt': [logicalIdOf(fn), 'Arn'] });
  });
});
