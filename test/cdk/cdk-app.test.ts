/**
 * cdk/app.ts as the CDK CLI runs it (context and output directory from the
 * environment): it validates the tool folders first and synthesizes with cdk-nag.
 * Bundling is skipped here; bundling.test.ts covers it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { CDK_JSON_CONTEXT } from './cdk-test-app.ts';

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

function runApp(context: Record<string, unknown>) {
  const outdir = mkdtempSync(join(tmpdir(), 'async-mcp-app-'));
  outdirs.push(outdir);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'cdk', 'app.ts')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      CDK_OUTDIR: outdir,
      // CDK's built-in CloudFormation validation is covered by cfn-lint.test.ts.
      CDK_VALIDATION: 'false',
      CDK_CONTEXT_JSON: JSON.stringify({ ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context }),
    },
    timeout: 120_000,
  });
  return { ...run, outdir };
}

/**
 * The limits and the events settings are read by different constructs, so one synth with both
 * sets of context serves the two tests that read them (a synth is several seconds of CPU).
 */
let configured: ReturnType<typeof runApp> | undefined;
const runConfigured = () =>
  (configured ??= runApp({
    maxActiveOperations: '25',
    mcpReservedConcurrency: '50',
    statusSyncReservedConcurrency: '5',
    workerReservedConcurrency: '20',
    toolStackCount: '1',
    eventsRetentionHours: '72',
    eventsMaxSubscriptionTtlSeconds: '7200',
    eventsDeliveryConcurrency: '7',
  }));

describe('cdk/app.ts', () => {
  it('synthesizes the AsyncMcp stack with cdk-nag clean', () => {
    const run = runApp({});
    expect(run.status, run.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(run.outdir, 'AsyncMcp.template.json'), 'utf8')) as { Outputs: object };
    expect(Object.keys(template.Outputs)).toEqual(
      expect.arrayContaining(['McpUrl', 'FunctionUrlAuthType', 'McpFunctionArn', 'OperationsTableName', 'McpLogGroupName', 'StatusSyncDeadLetterQueueUrl']),
    );
    const report = JSON.parse(readFileSync(join(run.outdir, 'validation-report.json'), 'utf8')) as { pluginReports: unknown[] };
    expect(report.pluginReports).toEqual([]);
  });

  it('takes the active-operation limit, the reserved concurrencies and the tool stack count from context (-c key=value)', () => {
    const run = runConfigured();
    expect(run.status, run.stderr).toBe(0);
    // The workers are in nested stacks, each a template file of its own.
    const files = ['AsyncMcp.template.json', ...readdirSync(run.outdir).filter((file) => file.endsWith('.nested.template.json'))];
    const templates = files.map(
      (file) =>
        JSON.parse(readFileSync(join(run.outdir, file), 'utf8')) as {
          Resources: Record<
            string,
            { Type: string; Properties: { Description?: string; ReservedConcurrentExecutions?: number; Environment?: { Variables: Record<string, unknown> } } }
          >;
        },
    );
    const functions = templates.flatMap((template) => Object.values(template.Resources)).filter((resource) => resource.Type === 'AWS::Lambda::Function');
    const reservedBy = (description: RegExp) =>
      functions.filter((fn) => description.test(fn.Properties.Description ?? '')).map((fn) => fn.Properties.ReservedConcurrentExecutions);
    expect(reservedBy(/^async-mcp MCP server/)).toEqual([50]);
    expect(reservedBy(/^async-mcp status sync/)).toEqual([5]);
    const workers = reservedBy(/^async-mcp worker /);
    expect(workers.length).toBeGreaterThan(0);
    expect(workers.every((reserved) => reserved === 20)).toBe(true);
    const limits = functions.map((fn) => fn.Properties.Environment?.Variables[ENV.maxActiveOperations]).filter((value) => value !== undefined);
    expect(limits).toEqual(['25', '25']);
    // -c toolStackCount=1: every tool's state machine in one nested stack.
    expect(files.filter((file) => /^AsyncMcpServerTools/.test(file))).toHaveLength(1);
  });

  it('takes the events settings from context (-c eventsRetentionHours=72 -c eventsMaxSubscriptionTtlSeconds=7200 -c eventsDeliveryConcurrency=7)', () => {
    const run = runConfigured();
    expect(run.status, run.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(run.outdir, 'AsyncMcp.template.json'), 'utf8')) as {
      Resources: Record<
        string,
        {
          Type: string;
          Properties: { Description?: string; ScalingConfig?: { MaximumConcurrency?: number }; Environment?: { Variables: Record<string, unknown> } };
        }
      >;
    };
    const resources = Object.values(template.Resources);
    const mcp = resources.filter(
      (resource) => resource.Type === 'AWS::Lambda::Function' && /^async-mcp MCP server/.test(resource.Properties.Description ?? ''),
    );
    expect(mcp).toHaveLength(1);
    expect(mcp[0]?.Properties.Environment?.Variables).toMatchObject({
      [ENV.events]: '1',
      [ENV.eventsRetentionHours]: '72',
      [ENV.eventsMaxSubscriptionTtlSeconds]: '7200',
    });
    const mappings = resources.filter((resource) => resource.Type === 'AWS::Lambda::EventSourceMapping').map((resource) => resource.Properties.ScalingConfig);
    expect(mappings).toContainEqual({ MaximumConcurrency: 7 });
  });

  it('turns the events extension off from context (-c events=false): the MCP function serves no events and has no delivery queue', () => {
    const run = runApp({ events: 'false' });
    expect(run.status, run.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(run.outdir, 'AsyncMcp.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: { Description?: string; Environment?: { Variables: Record<string, unknown> } } }>;
    };
    const mcp = Object.values(template.Resources).filter(
      (resource) => resource.Type === 'AWS::Lambda::Function' && /^async-mcp MCP server/.test(resource.Properties.Description ?? ''),
    );
    expect(mcp).toHaveLength(1);
    expect(mcp[0]?.Properties.Environment?.Variables[ENV.events]).toBe('0');
    expect(mcp[0]?.Properties.Environment?.Variables[ENV.eventsDeliveryQueueUrl]).toBeUndefined();
  });

  it('refuses an invalid tools directory before synthesizing anything', () => {
    const run = runApp({ toolsDir: join(REPO_ROOT, 'no-such-tools-dir') });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/Invalid tool folder: .*no-such-tools-dir: cannot read the tools directory/);
    expect(existsSync(join(run.outdir, 'AsyncMcp.template.json'))).toBe(false);
  });
});
