/**
 * Issue 10, "Results of any size": the results bucket in the template. Encrypted, public
 * access blocked, TLS enforced, emptied by a lifecycle rule tied to the longest run plus
 * the longest keepAlive, and named to the Lambdas that use it. (Grants scoped to its
 * objects: least-privilege.test.ts.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Stack } from 'aws-cdk-lib';
import { Match, Template as TemplateOf, type Template } from 'aws-cdk-lib/assertions';
import { ResultsBucket, type ResultsBucketProps } from '../../cdk/results-bucket.ts';
import { RESULT_KEY_PREFIXES } from '../../lambdas/operations/result-store.ts';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { bareApp, logicalIdOf, repoTools, resourcesOf, synthTemplate } from './cdk-test-app.ts';

let tools: ToolFolder[];
let stack: AsyncMcpStack;
let template: Template;

beforeAll(async () => {
  tools = await repoTools();
  ({ stack, template } = synthTemplate(tools));
});

const bucketOf = (current: Template, current_stack: AsyncMcpStack) =>
  resourcesOf(current, 'AWS::S3::Bucket')[logicalIdOf(current_stack.server.results.bucket)]!;

describe('the results bucket', () => {
  it('is encrypted at rest (SSE)', () => {
    expect(bucketOf(template, stack).Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
  });

  it('blocks every kind of public access', () => {
    expect(bucketOf(template, stack).Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
  });

  it('refuses requests without TLS (bucket policy denies aws:SecureTransport false)', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalIdOf(stack.server.results.bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  it('expires result objects once no operation can name them: the longest run plus the longest keepAlive, in whole days, plus one', () => {
    const longestRun = Math.max(...buildToolCatalog(tools, () => '').tools.map((tool) => tool.timing.maxRunSeconds));
    const days = Math.ceil((longestRun + 7 * 24 * 3600) / 86_400) + 1;
    expect(bucketOf(template, stack).Properties.LifecycleConfiguration.Rules).toEqual([
      expect.objectContaining({ Status: 'Enabled', Prefix: 'results/', ExpirationInDays: days }),
      // Results the server spills at completion are read only for the keepAlive after it.
      expect.objectContaining({ Status: 'Enabled', Prefix: 'results/spilled/', ExpirationInDays: 8 }),
    ]);
  });

  it('follows maxKeepAliveSeconds', () => {
    const { stack: short, template: shortTemplate } = synthTemplate(tools, { maxKeepAliveSeconds: 3600 });
    const longestRun = Math.max(...buildToolCatalog(tools, () => '').tools.map((tool) => tool.timing.maxRunSeconds));
    const [rule] = bucketOf(shortTemplate, short).Properties.LifecycleConfiguration.Rules;
    expect(rule.ExpirationInDays).toBe(Math.ceil((longestRun + 3600) / 86_400) + 1);
  });

  it('is named to the MCP Lambda, status sync and the workers that write results', () => {
    const bucketRef = { Ref: logicalIdOf(stack.server.results.bucket) };
    const environmentOf = (fn: { node: { defaultChild?: unknown } } & object) =>
      resourcesOf(template, 'AWS::Lambda::Function')[logicalIdOf(fn as never)]!.Properties.Environment.Variables;
    expect(environmentOf(stack.server.mcpFunction)[ENV.resultsBucket]).toEqual(bucketRef);
    expect(environmentOf(stack.server.statusSync!.function.function)[ENV.resultsBucket]).toEqual(bucketRef);
    expect(environmentOf(stack.server.workerFunctions.get('export_dataset')!)[ENV.resultsBucket]).toEqual(bucketRef);
    expect(environmentOf(stack.server.workerFunctions.get('calculate')!)?.[ENV.resultsBucket]).toBeUndefined();
  });
});

describe('results expire with their operations (the construct)', () => {
  const DAY = 86_400;
  const rulesOf = (props: ResultsBucketProps) => {
    const stack = new Stack(bareApp(), 'Bucket');
    new ResultsBucket(stack, 'Results', props);
    const [bucket] = Object.values(TemplateOf.fromStack(stack).findResources('AWS::S3::Bucket'));
    return (bucket as { Properties: { LifecycleConfiguration: { Rules: Array<Record<string, unknown>> } } }).Properties.LifecycleConfiguration.Rules;
  };

  it('results the server spills at completion expire after the longest keepAlive (whole days, plus one), not the longest run as well', () => {
    const rules = rulesOf({ maxLifetimeSeconds: 365 * DAY + 7 * DAY, spilledLifetimeSeconds: 7 * DAY });
    expect(rules).toEqual([
      expect.objectContaining({ Id: 'ExpireResults', Prefix: 'results/', ExpirationInDays: 373 }),
      { Id: 'ExpireSpilledResults', Status: 'Enabled', Prefix: RESULT_KEY_PREFIXES.server, ExpirationInDays: 8 },
    ]);
  });

  it('results a worker writes during the run keep the run-plus-keepAlive rule: their prefix is under it and under no shorter one', () => {
    const rules = rulesOf({ maxLifetimeSeconds: 30 * DAY, spilledLifetimeSeconds: DAY });
    const covering = rules.filter((rule) => RESULT_KEY_PREFIXES.worker.startsWith(String(rule.Prefix)));
    expect(covering).toEqual([expect.objectContaining({ Id: 'ExpireResults', ExpirationInDays: 31 })]);
    // Results written before keys were hashed (results/<owner>/<id>) sit under the same rule.
    expect(rules.filter((rule) => 'results/0123456789abcdef0123456789abcdef/x'.startsWith(String(rule.Prefix))).map((rule) => rule.Id)).toEqual([
      'ExpireResults',
    ]);
  });

  it('with unlimited keepAlive neither kind expires (the operator deletes them with the records)', () => {
    const rules = rulesOf({ maxLifetimeSeconds: undefined, spilledLifetimeSeconds: undefined });
    expect(rules).toEqual([expect.not.objectContaining({ ExpirationInDays: expect.anything() })]);
  });

  it('without a spilled lifetime, spilled results follow the run-plus-keepAlive rule, as before', () => {
    expect(rulesOf({ maxLifetimeSeconds: 10 * DAY }).map((rule) => rule.Id)).toEqual(['ExpireResults']);
  });
});
