/**
 * A catalog past one stack's limits: CloudFormation takes at most 500 resources and a 1 MB
 * template per stack, so the tools' state machines and durable functions and the workers go
 * to nested stacks, and every template stays well within both (under 400 resources and 800 KB)
 * at 200 and 300 tools. Grants and the status rules name the machines and the durable functions
 * by their name prefixes, so the MCP role's policy (IAM: 10,240 characters of inline policy per
 * role) and the rules' patterns (2,048 characters) do not grow with the catalog.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NestedStack } from 'aws-cdk-lib';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { EVENT_PATTERN_MAX_CHARS } from '../../cdk/status-sync.ts';
import { DEFAULT_TOOLS_DIR, REPO_ROOT } from '../../cdk/repo-paths.ts';
import { buildStack, logicalIdOf, testApp } from './cdk-test-app.ts';

/** CloudFormation's limits on one stack, and the margin this server keeps below them. */
const CFN_MAX_RESOURCES = 500;
const CFN_MAX_TEMPLATE_BYTES = 1_000_000;
const MAX_RESOURCES = 400;
const MAX_TEMPLATE_BYTES = 800 * 1024;
/** IAM: all inline policies of one role together. */
const IAM_INLINE_POLICY_MAX_CHARS = 10_240;

interface Measured {
  path: string;
  resources: number;
  bytes: number;
}

let toolsDir: string;
let originals: ToolFolder[];

beforeAll(async () => {
  // Three kinds of tool: EXPRESS (quick_calculation), STANDARD (summarize_numbers) and a durable
  // function (plain_durable), each loaded (so validated) from a folder of its own; the copies differ only by name.
  toolsDir = mkdtempSync(join(tmpdir(), 'async-mcp-catalog-'));
  for (const tool of ['quick_calculation', 'summarize_numbers']) cpSync(join(DEFAULT_TOOLS_DIR, tool), join(toolsDir, tool), { recursive: true });
  // A durable function is bundled from the folder holding its durable.ts and this package: loaded where it is, not copied.
  const durable = await loadToolFolders(join(REPO_ROOT, 'test', 'fixtures', 'cdk-durable-tools'));
  originals = [...(await loadToolFolders(toolsDir)), ...durable];
});

afterAll(() => rmSync(toolsDir, { recursive: true, force: true }));

/** `count` tools, every fourth a STANDARD one and every fourth a durable one. Loading 300 folders validates the same three 300 times. */
function catalog(count: number): ToolFolder[] {
  const [express, standard, durable] = ['quick_calculation', 'summarize_numbers', 'plain_durable'].map(
    (name) => originals.find((tool) => tool.config.name === name)!,
  );
  return Array.from({ length: count }, (_, i) => {
    const tool = i % 4 === 3 ? standard! : i % 4 === 1 ? durable! : express!;
    return { ...tool, config: { ...tool.config, name: `${tool.config.name}_${i}` } };
  });
}

/** How many of `count` tools `catalog` makes durable. */
const durableOf = (count: number) => Math.floor((count + 2) / 4);

/** The part of a synthesized template these checks read. */
type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

/** Synthesizes the stack and measures each template as `cdk deploy` uploads it. */
function synthesize(count: number): { stack: AsyncMcpStack; templates: Measured[]; templateOf: (path: string) => TemplateJson } {
  const app = testApp();
  const stack = buildStack(app, catalog(count));
  const assembly = app.synth();
  const stacks = [stack, ...stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))];
  const json = new Map<string, TemplateJson>();
  const templates = stacks.map((each) => {
    const text = readFileSync(join(assembly.directory, each.templateFile), 'utf8');
    const template = JSON.parse(text) as TemplateJson;
    json.set(each.node.path, template);
    return { path: each.node.path, resources: Object.keys(template.Resources).length, bytes: Buffer.byteLength(text) };
  });
  return { stack, templates, templateOf: (path) => json.get(path)! };
}

describe.each([200, 300])('%i tools', (count) => {
  let result: ReturnType<typeof synthesize>;
  /** Each template's size, for the message of a limit it passes (a green run prints nothing). */
  let report: string;
  beforeAll(() => {
    result = synthesize(count);
    const sizes = result.templates.map(({ path, resources, bytes }) => `${path}: ${resources} resources, ${Math.round(bytes / 1024)} KB`);
    report = `${count} tools:\n  ${sizes.join('\n  ')}`;
  }, 240_000);

  it("synthesize with every template under 400 resources and 800 KB, well within CloudFormation's 500 and 1 MB", () => {
    const { stack, templates } = result;
    expect(stack.server.toolStateMachines.size).toBe(count - durableOf(count));
    expect(stack.server.durableToolFunctions.size).toBe(durableOf(count));
    expect(templates.length).toBeGreaterThan(1);
    for (const { path, resources, bytes } of templates) {
      expect(resources, `${path}, of ${report}`).toBeLessThan(MAX_RESOURCES);
      expect(bytes, `${path}, of ${report}`).toBeLessThan(MAX_TEMPLATE_BYTES);
      expect(resources).toBeLessThan(CFN_MAX_RESOURCES);
      expect(bytes).toBeLessThan(CFN_MAX_TEMPLATE_BYTES);
    }
    // Every tool's machine or durable function is in a nested stack, none in the top-level one.
    const resourcesIn = (type: string, path: string) => Object.values(result.templateOf(path).Resources).filter((r) => r.Type === type).length;
    expect(resourcesIn('AWS::StepFunctions::StateMachine', stack.node.path)).toBe(0);
    expect(resourcesIn('AWS::Lambda::Alias', stack.node.path)).toBe(0);
    const total = (type: string) => templates.reduce((sum, { path }) => sum + resourcesIn(type, path), 0);
    expect(total('AWS::StepFunctions::StateMachine')).toBe(count - durableOf(count));
    expect(total('AWS::Lambda::Alias')).toBe(durableOf(count));
  });

  it("keep the MCP role's policy within IAM's 10,240 characters, naming the machines by their prefix", () => {
    const { stack } = result;
    const top = result.templateOf(stack.node.path);
    const roleId = logicalIdOf(stack.server.mcpFunction.role!);
    const policies = Object.values(top.Resources).filter(
      (r) =>
        (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') && JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    ) as Array<{ Type: string; Properties: { PolicyDocument: { Statement: unknown[] } } }>;
    expect(policies.map((policy) => policy.Type)).toEqual(['AWS::IAM::Policy']);
    const document = JSON.stringify(policies[0]!.Properties.PolicyDocument);
    // Pseudo parameters resolve to longer text than their Refs; a margin covers them.
    expect(document.length).toBeLessThan(IAM_INLINE_POLICY_MAX_CHARS / 2);
    expect(document).toContain(`:stateMachine:${stack.server.stateMachineNamePrefix}*`);
    expect(document).toContain(`:execution:${stack.server.stateMachineNamePrefix}*:*`);
    expect(document).toContain(`:function:${stack.server.durableFunctionNamePrefix}*:live`);
    expect(document).toContain(`:function:${stack.server.durableFunctionNamePrefix}*:*/durable-execution/*`);
    expect(document).not.toContain('quick_calculation');
    expect(document).not.toContain('plain_durable');
  });

  it('cover every STANDARD machine with one status rule, and every durable function with one more, each pattern within 2,048 characters', () => {
    const { stack } = result;
    expect(stack.server.statusSync!.rules).toHaveLength(1);
    expect(stack.server.statusSync!.durableRule).toBeDefined();
    const top = result.templateOf(stack.node.path);
    const rules = Object.values(top.Resources).filter((r) => r.Type === 'AWS::Events::Rule');
    expect(rules).toHaveLength(2);
    for (const rule of rules) expect(JSON.stringify(rule.Properties.EventPattern).length).toBeLessThan(EVENT_PATTERN_MAX_CHARS);
    // A status-sync grant as small: describe and stop by the prefix.
    const statusSyncRole = logicalIdOf(stack.server.statusSync!.function.role);
    const policy = Object.values(top.Resources).find(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: statusSyncRole }]),
    );
    expect(JSON.stringify(policy).length).toBeLessThan(IAM_INLINE_POLICY_MAX_CHARS / 2);
  });

  it("keep the dashboard within CloudWatch's 500 widgets and 2,500 metrics, graphing the first tools and naming the rest", () => {
    const { stack } = result;
    const top = result.templateOf(stack.node.path);
    const [dashboard] = Object.values(top.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    expect(body.length).toBeLessThan(300 * 1024);
    const widgets = body.match(/\\"type\\":\\"(metric|text|alarm)\\"/g) ?? [];
    expect(widgets.length).toBeGreaterThan(10);
    expect(widgets.length).toBeLessThanOrEqual(500);
    expect(body).toMatch(/more tools .* have no graph here/);
    expect(body).toMatch(/more durable tools .* have no graph here/);
  });
});
