/**
 * What the AsyncMcpServer construct passes on to its parts: the results bucket's rule for
 * spilled results (they expire after the keepAlive bound, not the longest run plus it), and
 * the synth-time warning of an explicit principalScope 'role'.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { RESULT_KEY_PREFIXES } from '../../lambdas/operations/result-store.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { consoleNotices } from '../support/console-notices.ts';
import { buildStack, repoTools, resourcesOf, synthTemplate, testApp } from './cdk-test-app.ts';

let tools: ToolFolder[];
beforeAll(async () => {
  tools = await repoTools();
});

describe('the results bucket of a deployed server', () => {
  it('spilled results expire after the keepAlive bound plus a day, under their own prefix', () => {
    const { template } = synthTemplate(tools, { maxKeepAliveSeconds: 3 * 24 * 3600 });
    const [bucket] = Object.values(resourcesOf(template, 'AWS::S3::Bucket'));
    const rules = (bucket!.Properties.LifecycleConfiguration as { Rules: Array<Record<string, unknown>> }).Rules;
    expect(rules).toContainEqual(expect.objectContaining({ Id: 'ExpireSpilledResults', Prefix: RESULT_KEY_PREFIXES.server, ExpirationInDays: 4 }));
  });
});

describe('principalScope on a deployed server', () => {
  it("an explicit principalScope 'role' warns at synth that SSO users of one permission set would share operations", () => {
    const notices = consoleNotices('error', /Annotation::async-mcp:principalScopeRole/);
    const app = testApp();
    const stack = buildStack(app, tools, { auth: { kind: 'iam', principalScope: 'role' } });
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AWSReservedSSO'))).not.toEqual([]);
    expect(notices()).toEqual([expect.stringContaining("auth.principalScope is 'role'")]);
  });
});
