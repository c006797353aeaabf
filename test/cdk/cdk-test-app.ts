/**
 * Test helpers for the CDK app: an App with cdk.json's feature flags, one synth per
 * call, bundling skipped unless asked (esbuild for seven functions costs seconds).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type AppProps, CfnElement, NestedStack, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { onTestFinished } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { DURABLE_FILE, loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { AsyncMcpStack, type AsyncMcpStackProps } from '../../cdk/async-mcp-stack.ts';
import { DEFAULT_TOOLS_DIR, REPO_ROOT } from '../../cdk/repo-paths.ts';

/** The context `cdk synth` runs with (feature flags), from cdk.json. */
export const CDK_JSON_CONTEXT = (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

export interface TestAppOptions {
  /** Really bundle the Lambdas with esbuild. */
  bundle?: boolean;
  /** CDK's built-in CloudFormation schema validation (about 4 s on first use). */
  cfnValidation?: boolean;
}

const outdirs: string[] = [];

/**
 * Removes the outdirs made outside a test (at collection or in a hook). The cdk project runs
 * its files without isolation, so this module is evaluated once per worker and an afterAll
 * registered here would serve only the first file: remove-app-outdirs.ts, a setup file run
 * before every file, registers this for each.
 */
export function removeAppOutdirs(): void {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** An outdir for one App, removed when the test that made it ends, else after its file. */
function appOutdir(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'async-mcp-cdk-'));
  try {
    onTestFinished(() => rmSync(outdir, { recursive: true, force: true }));
  } catch {
    outdirs.push(outdir);
  }
  return outdir;
}

export function testApp(options: TestAppOptions = {}): App {
  const outdir = appOutdir();
  return new App({
    outdir,
    builtinCloudFormationValidation: options.cfnValidation ?? false,
    context: {
      ...CDK_JSON_CONTEXT,
      // An empty list skips bundling for every stack; the asset hash becomes a placeholder.
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
}

/** A plain App (no cdk.json context) with an outdir removed after the file: `new App()` makes a `cdk.outXXXXXX` in the temp dir and leaves it. */
export function bareApp(props: AppProps = {}): App {
  return new App({ ...props, outdir: appOutdir() });
}

export type StackOverrides = Partial<AsyncMcpStackProps>;

/** The repository's tool folders, loaded (and so validated) once per test file. */
export function repoTools(): Promise<ToolFolder[]> {
  return loadToolFolders(DEFAULT_TOOLS_DIR);
}

/** Test tools that ask the client questions (`${Worker_request_input}`), JSONPath and JSONata. */
export const INPUT_FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures', 'input-tools');

/** The repository's tools plus the input fixtures, so the stack has machines that ask and machines that do not. */
export async function toolsWithInputFixtures(): Promise<ToolFolder[]> {
  const [repo, fixtures] = await Promise.all([repoTools(), loadToolFolders(INPUT_FIXTURES_DIR)]);
  return [...repo, ...fixtures.filter((fixture) => !repo.some((tool) => tool.config.name === fixture.config.name))];
}

export function buildStack(app: App, tools: readonly ToolFolder[], overrides: StackOverrides = {}): AsyncMcpStack {
  return new AsyncMcpStack(app, 'AsyncMcpTest', { tools, ...overrides });
}

/**
 * `template`: what the deploy creates, nested stacks included (see {@link deployedTemplate});
 * `main`: the top-level stack's own template.
 */
export function synthTemplate(tools: readonly ToolFolder[], overrides: StackOverrides = {}, options: TestAppOptions = {}) {
  const app = testApp(options);
  const stack = buildStack(app, tools, overrides);
  return { app, stack, template: deployedTemplate(stack), main: Template.fromStack(stack) };
}

/**
 * Copies the repository's state machine tool folders into `dir`. The durable tools stay out: a
 * durable function is bundled from the folder that holds both its durable.ts and this package,
 * which for a copy in the temp dir would be the file system's root.
 */
export function copyMachineToolFolders(dir: string): void {
  cpSync(DEFAULT_TOOLS_DIR, dir, { recursive: true, filter: (source) => !existsSync(join(source, DURABLE_FILE)) });
}

/**
 * A temporary copy of the repository's state machine tools plus one more folder, a copy of an
 * existing tool under a new name (so it reuses that tool's workers).
 */
export function toolsDirWithExtraTool(extraName: string, copyOf: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'async-mcp-tools-'));
  copyMachineToolFolders(dir);
  cpSync(join(DEFAULT_TOOLS_DIR, copyOf), join(dir, extraName), { recursive: true });
  const toolFile = join(dir, extraName, 'tool.json');
  const config = JSON.parse(readFileSync(toolFile, 'utf8')) as Record<string, unknown>;
  writeFileSync(toolFile, JSON.stringify({ ...config, name: extraName }, null, 2));
  return dir;
}

/** Resources of one type, keyed by logical id. */
export function resourcesOf(template: Template, type: string): Record<string, CfnResourceJson> {
  return template.findResources(type) as Record<string, CfnResourceJson>;
}

/** A resource as it appears in the template. */
export interface CfnResourceJson {
  Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: template JSON, whose shape the assertions check
  Properties: Record<string, any>;
  [key: string]: unknown;
}

/** The logical id of a construct's CloudFormation resource, to follow Refs without hard-coding ids. */
export function logicalIdOf(construct: IConstruct): string {
  const resource = construct.node.defaultChild;
  if (!(resource instanceof CfnElement)) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  // Resolved: a function's current version has a logical id derived from the function's hash, a token until then.
  return Stack.of(resource).resolve(resource.logicalId) as string;
}

type Json = unknown;

/**
 * Every resource the deploy creates, the nested stacks' included, as one template: each
 * nested stack's parameters replaced by what its parent passes, and each `Outputs.X` of a
 * nested stack by the output's value. Refs then name the resources themselves, as they did
 * when everything was in one stack.
 */
export function deployedTemplate(stack: Stack): Template {
  const root = Template.fromStack(stack).toJSON() as TemplateJson;
  const nested = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c) && c.nestedStackParent === stack);
  const byResourceId = new Map(
    nested.map((child) => [stack.getLogicalId(child.nestedStackResource as CfnElement), Template.fromStack(child).toJSON() as TemplateJson]),
  );
  const outputOf = (resourceId: string, name: string): Json => {
    const child = byResourceId.get(resourceId);
    const output = child?.Outputs?.[name];
    if (!child || !output) throw new Error(`no output ${name} in nested stack ${resourceId}`);
    return resolveNested(resourceId, output.Value);
  };
  const resolveParent = (value: Json): Json =>
    replaceDeep(value, (node) => {
      const getAtt = (node as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
      if (getAtt && byResourceId.has(getAtt[0]) && getAtt[1].startsWith('Outputs.')) return { value: outputOf(getAtt[0], getAtt[1].slice('Outputs.'.length)) };
      return undefined;
    });
  const resolveNested = (resourceId: string, value: Json): Json => {
    const passed = (root.Resources[resourceId]?.Properties?.Parameters ?? {}) as Record<string, Json>;
    return replaceDeep(value, (node) => {
      const ref = (node as { Ref?: string }).Ref;
      if (typeof ref === 'string' && ref in passed) return { value: resolveParent(passed[ref]) };
      return undefined;
    });
  };
  const resources: Record<string, Json> = {};
  for (const [id, resource] of Object.entries(root.Resources)) {
    if (!byResourceId.has(id)) resources[id] = resolveParent(resource);
  }
  for (const [resourceId, child] of byResourceId) {
    for (const [id, resource] of Object.entries(child.Resources)) {
      if (id in resources) throw new Error(`logical id ${id} is in two stacks`);
      resources[id] = resolveNested(resourceId, resource);
    }
  }
  return Template.fromJSON({ ...root, Resources: resources, Outputs: resolveParent(root.Outputs ?? {}) }, { skipCyclicalDependenciesCheck: true });
}

interface TemplateJson {
  Resources: Record<string, { Type: string; Properties?: Record<string, Json> }>;
  Outputs?: Record<string, { Value: Json }>;
  [key: string]: Json;
}

/** `value` with each node `replace` answers for swapped, deeply. */
function replaceDeep(value: Json, replace: (node: object) => { value: Json } | undefined): Json {
  if (Array.isArray(value)) return value.map((item) => replaceDeep(item, replace));
  if (value !== null && typeof value === 'object') {
    const replaced = replace(value);
    if (replaced) return replaced.value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replaceDeep(item, replace)]));
  }
  return value;
}
