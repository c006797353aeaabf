/**
 * `cdk synth` of a new stack prints nothing a new user must act on: no durable tool's function
 * carries Lambda's note that making an existing function durable replaces it (a durable tool's
 * function is durable from its first deploy), and cdk.json (the project's is held equal to it
 * in init-project.test.ts) sets every feature flag whose unset behaviour is not the
 * recommended one, which the CLI counts as "N feature flags are not configured".
 */
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import type { AsyncMcpStack } from '../../cdk/async-mcp-stack.ts';
import { DURABILITY_REPLACEMENT_INFO } from '../../cdk/durable-tool-function.ts';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { repoTools, synthTemplate } from './cdk-test-app.ts';

/** A flag as the assembly's feature flag report gives it to the CLI. */
interface ReportedFlag {
  userValue?: unknown;
  recommendedValue?: unknown;
  unconfiguredBehavesLike?: { v2?: unknown };
}

let app: App;
let stack: AsyncMcpStack;

beforeAll(async () => {
  const [repo, fixtures] = await Promise.all([repoTools(), loadToolFolders(join(REPO_ROOT, 'test', 'fixtures', 'cdk-durable-tools'))]);
  ({ app, stack } = synthTemplate([...repo, ...fixtures]));
}, 120_000);

it("gives no durable tool's function the note that turning a function durable replaces it", () => {
  expect(stack.server.durableToolFunctions.size).toBeGreaterThan(1);
  const notes = Annotations.fromStack(stack).findInfo('*', Match.stringLikeRegexp('use durability'));
  expect(notes.map((note) => `${note.id}: ${String(note.entry.data)}`)).toEqual([]);
  expect(DURABILITY_REPLACEMENT_INFO).toBe('aws-lambda:Function.DurableConfig');
});

it('configures every feature flag whose unset behaviour differs from the recommended value', () => {
  const report = app.synth().manifest.artifacts?.['aws-cdk-lib/feature-flag-report'];
  const flags = (report?.properties as { flags?: Record<string, ReportedFlag> } | undefined)?.flags ?? {};
  expect(Object.keys(flags).length).toBeGreaterThan(50);
  // As the CLI decides it: not set by the user, and unset it would not behave as recommended.
  const unconfigured = Object.entries(flags)
    .filter(([, flag]) => flag.userValue === undefined && (flag.unconfiguredBehavesLike?.v2 ?? false) !== flag.recommendedValue)
    .map(([name]) => name);
  expect(unconfigured).toEqual([]);
});
