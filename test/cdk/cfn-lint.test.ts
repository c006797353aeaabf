/**
 * The synthesized templates pass CDK's built-in CloudFormation validation and, on a
 * machine that has it, cfn-lint (skipped cleanly otherwise).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { basename, join } from 'node:path';
import { Duration, NestedStack } from 'aws-cdk-lib';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { consoleNotices, FUNCTION_URL_NONE_NOTICE } from '../support/console-notices.ts';
import { buildStack, repoTools, testApp, type StackOverrides } from './cdk-test-app.ts';

const cfnLintAvailable = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' }).status === 0;

// W3005 ("dependency already enforced by a GetAtt") flags the DependsOn CDK always adds
// from a function to its role's default policy; it is harmless and not ours to change.
const IGNORED_CHECKS = ['W3005'];

const VARIANTS: [string, StackOverrides][] = [
  ['default props', {}],
  [
    'tracing through the ADOT layer, NONE Function URL',
    {
      tracing: { exporter: 'adot-layer', layerArn: 'arn:aws:lambda:eu-west-1:123456789012:layer:adot-nodejs-arm64-example:1' },
      functionUrlAuthType: FunctionUrlAuthType.NONE,
    },
  ],
  [
    'OAuth with CORS, dead-letter retention set',
    {
      auth: { kind: 'oauth', issuer: 'https://issuer.example.com', requiredScopes: ['mcp'] },
      corsAllowedOrigins: ['*'],
      deadLetterRetention: Duration.days(1),
    },
  ],
];

describe('CloudFormation templates', () => {
  const templates: string[] = [];
  // A test app's outdir goes when its test ends: the templates the lint reads are kept here until this file ends.
  const kept = mkdtempSync(join(tmpdir(), 'async-mcp-cfn-lint-'));
  afterAll(() => rmSync(kept, { recursive: true, force: true }));
  const keep = (file: string, variant: number) => {
    const copy = join(kept, `${variant}-${basename(file)}`);
    copyFileSync(file, copy);
    return copy;
  };

  it("pass CDK's built-in CloudFormation validation", { timeout: 240_000 }, async () => {
    const notices = consoleNotices('error', FUNCTION_URL_NONE_NOTICE);
    const tools = await repoTools();
    for (const [variant, [, overrides]] of VARIANTS.entries()) {
      const app = testApp({ cfnValidation: true });
      const stack = buildStack(app, tools, overrides);
      // synth() throws when the validation reports a problem.
      const assembly = app.synth();
      templates.push(keep(assembly.getStackByName(stack.stackName).templateFullPath, variant));
      // The nested stacks of the tools and workers: a template file each, beside the top-level one.
      const nested = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
      expect(nested.length).toBeGreaterThan(1);
      templates.push(...nested.map((child) => keep(join(assembly.directory, child.templateFile), variant)));
    }
    expect(templates.length).toBeGreaterThan(VARIANTS.length * 2);
    // The one warning synth gives: the open Function URL of the NONE variant.
    expect(notices()).toHaveLength(1);
  });

  // cfn-lint is a Python tool that npm cannot install, so a fresh machine may lack it; CDK's own
  // CloudFormation validation above runs everywhere.
  it.skipIf(!cfnLintAvailable)(
    `pass cfn-lint${cfnLintAvailable ? '' : ' (skipped: cfn-lint is not installed; pip install cfn-lint)'}`,
    () => {
      const lint = spawnSync('cfn-lint', ['--ignore-checks', ...IGNORED_CHECKS, '--', ...templates], { encoding: 'utf8' });
      expect(lint.status, `${lint.stdout}${lint.stderr}`).toBe(0);
      // About 10 templates per variant now that the tools and workers have nested stacks.
    },
    240_000,
  );
});
