/**
 * What AsyncMcpStack synthesizes, compared whole against templates committed beside this file:
 * the top-level stack and every nested stack, resource by resource and property by property.
 * A restructuring of the construct keeps them equal; a change meant to alter the deployment
 * regenerates them (`UPDATE_TEMPLATE_SNAPSHOTS=1 npx vitest run test/cdk/template-snapshot.test.ts`)
 * and shows the difference in review. One synth per configuration, bundling skipped.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Duration, NestedStack, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { consoleNotices, FUNCTION_URL_NONE_NOTICE } from '../support/console-notices.ts';
import { buildStack, repoTools, type StackOverrides, testApp, toolsWithInputFixtures } from './cdk-test-app.ts';

const SNAPSHOT_DIR = join(REPO_ROOT, 'test', 'cdk', 'template-snapshots');
const UPDATE = process.env.UPDATE_TEMPLATE_SNAPSHOTS === '1';

interface Configuration {
  /** The snapshot file's name. */
  readonly name: string;
  readonly tools: () => Promise<ToolFolder[]>;
  readonly overrides: StackOverrides;
}

/** The repository's EXPRESS tools, and one tool that names a state machine deployed elsewhere. */
async function expressAndExisting(): Promise<ToolFolder[]> {
  const tools = await repoTools();
  const express = tools.filter((tool) => tool.config.workflowType === 'EXPRESS');
  const standard = tools.find((tool) => tool.config.workflowType === 'STANDARD')!;
  const existing: ToolFolder = {
    ...standard,
    workers: [],
    definitionText: undefined,
    config: {
      ...standard.config,
      name: 'existing_express',
      workflowType: 'EXPRESS',
      stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:existing_express',
    },
  };
  return [...express, existing];
}

// Between them, every prop of the construct and every branch of its wiring.
const CONFIGURATIONS: Configuration[] = [
  { name: 'defaults', tools: repoTools, overrides: {} },
  {
    name: 'oauth-events-off-card-off',
    tools: repoTools,
    overrides: {
      auth: {
        kind: 'oauth',
        issuer: 'https://issuer.example.com',
        audience: 'https://mcp.example.com/mcp',
        requiredScopes: ['mcp'],
        resourceUrl: 'https://mcp.example.com/mcp',
      },
      corsAllowedOrigins: ['https://inspector.example.com'],
      events: { enabled: false },
      operationCard: false,
    },
  },
  {
    name: 'iam-session-tuned',
    tools: toolsWithInputFixtures,
    overrides: {
      auth: { kind: 'iam', principalScope: 'session' },
      tracing: true,
      alarmEmail: 'ops@example.com',
      eventBusName: 'arn:aws:events:us-east-1:123456789012:event-bus/jobs',
      mcpReservedConcurrency: 20,
      statusSyncReservedConcurrency: 5,
      workerReservedConcurrency: 3,
      toolStackCount: 3,
      workerStackCount: 2,
      maxBlockingSeconds: 300,
      maxKeepAliveSeconds: 3600,
      allowUnlimitedKeepAlive: true,
      maxActiveOperations: 7,
      handleTools: false,
      listen: false,
      tableRemovalPolicy: RemovalPolicy.DESTROY,
      executionFailureRatePercent: 2,
      deadLetterRetention: Duration.days(2),
      logRetention: RetentionDays.ONE_WEEK,
      workerMemorySize: 1024,
      workerTimeout: Duration.minutes(2),
      events: { retentionHours: 72, maxSubscriptionTtl: Duration.hours(6), deliveryConcurrency: 50 },
    },
  },
  {
    name: 'express-existing-open-url',
    tools: expressAndExisting,
    overrides: { functionUrlAuthType: FunctionUrlAuthType.NONE, corsAllowedOrigins: ['*'] },
  },
];

/**
 * The top-level template and each nested stack's, by construct path. With bundling skipped, an
 * asset's hash is derived from its bundling options, absolute paths included, so it differs from one
 * checkout to another; so do the nested templates' hashes and the logical ids of function versions,
 * which hash the function's code location. Those hashes become placeholders; all else is compared.
 */
function templatesOf(stack: Stack): unknown {
  const nested = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
  const templates = {
    [stack.node.path]: Template.fromStack(stack).toJSON(),
    ...Object.fromEntries(nested.map((child) => [child.node.path, Template.fromStack(child).toJSON()])),
  };
  const text = JSON.stringify(templates)
    .replace(/\b[0-9a-f]{64}\b/g, '<asset-hash>')
    .replace(/(CurrentVersion[0-9A-F]{8})[0-9a-f]{32}\b/g, '$1<code-hash>');
  return JSON.parse(text);
}

describe('the synthesized templates equal the committed snapshots', () => {
  for (const configuration of CONFIGURATIONS) {
    it(configuration.name, async () => {
      const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
      const templates = templatesOf(buildStack(testApp(), await configuration.tools(), configuration.overrides));
      // Synth warns of a Function URL open to anyone (NONE, no OAuth), and of nothing else here.
      expect(notices().length > 0).toBe(configuration.overrides.functionUrlAuthType === FunctionUrlAuthType.NONE);
      const file = join(SNAPSHOT_DIR, `${configuration.name}.json`);
      if (UPDATE) {
        mkdirSync(SNAPSHOT_DIR, { recursive: true });
        writeFileSync(file, `${JSON.stringify(templates, null, 1)}\n`);
      }
      expect(existsSync(file), `no snapshot ${file}: run with UPDATE_TEMPLATE_SNAPSHOTS=1 to write it`).toBe(true);
      // Parsed, so only content counts (not key order or formatting).
      expect(templates).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
