/**
 * The `new-tool --durable` scaffold runs as it is (issue 38): loaded and catalogued as the
 * server would, its handler run on the testing SDK's LocalDurableTestRunner over the
 * in-memory core, it echoes its text, and with `--input` it asks to confirm first under the
 * key confirm, as the state machine scaffold does, and ends as a tool error once declined.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { LocalDurableTestRunner, WaitingOperationStatus } from '@aws/durable-execution-sdk-js-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeFinishedResult } from '../../lambdas/mcp/results/result-shaping.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { deployedToolArns } from '../../lambdas/tools/durable-function-names.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { startDurableTool } from './durable-tool-harness.ts';

const ARNS = deployedToolArns('arn:aws:states:us-east-1:000000000000:stateMachine:T-', 'arn:aws:lambda:us-east-1:000000000000:function:T-');
const ELICITATION = { elicitation: {} };

const tools = new Map<string, { spec: ToolSpec; handler: DurableLambdaHandler }>();

beforeAll(async () => {
  // With the repository's node_modules beside it, so durable.ts finds the SDK as a tool folder does.
  const dir = await mkdtemp(join(tmpdir(), 'new-tool-durable-'));
  await symlink(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [name, flags] of [
    ['echo_text', []],
    ['confirm_echo', ['--input', '--both']],
  ] as const) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', 'new-tool.ts'), name, '--durable', ...flags, '--tools-dir', dir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`new-tool ${name} failed: ${run.stderr}`);
  }
  const folders = await loadToolFolders(dir);
  const catalog = buildToolCatalog(folders, ARNS);
  for (const folder of folders) {
    const { handler } = (await import(pathToFileURL(folder.durable?.file ?? '').href)) as { handler: DurableLambdaHandler };
    const spec = catalog.get(folder.config.name);
    if (spec) tools.set(folder.config.name, { spec, handler });
  }
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: true });
}, 120_000);
// The folder stays in the run's own temp dir, which the global teardown removes
// (test/support/temp-dir-guard.ts): removing modules vitest has loaded while it runs stalls its exit.
afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

function tool(name: string) {
  const found = tools.get(name);
  if (!found) throw new Error(`${name} was not scaffolded`);
  return found;
}

describe('the new-tool --durable scaffold, run', () => {
  it('echoes its text, its result passing the outputSchema, with progress reported on the operation', async () => {
    const { spec, handler } = tool('echo_text');
    expect(spec.stateMachineArn).toBe('arn:aws:lambda:us-east-1:000000000000:function:T-echo_text:live');
    const run = await startDurableTool(spec, handler, { text: 'hello' });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(shapeFinishedResult({ kind: 'result', output: execution.getResult() }, spec)).toMatchObject({
      kind: 'call-tool-result',
      result: { structuredContent: { echo: 'hello' }, content: [{ type: 'text', text: 'hello' }] },
    });
    const reports = (await run.current()).reports ?? [];
    expect(reports.map((report) => (report.kind === 'progress' ? report.progress : undefined))).toEqual([0, 1]);
  });

  it('with --input, asks the client to confirm under the key confirm, and echoes once accepted', async () => {
    const { spec, handler } = tool('confirm_echo');
    const run = await startDurableTool(spec, handler, { text: 'hello' }, { clientCapabilities: ELICITATION, callbacks: ['confirm'] });
    await run.runner.getOperation('confirm-ask').waitForData(WaitingOperationStatus.COMPLETED);
    const record = await run.current();
    expect(record.status).toBe('input_required');
    expect(record.pendingInputs?.confirm?.request).toEqual({
      method: 'elicitation/create',
      params: { message: 'Echo "hello"?', requestedSchema: { type: 'object', properties: {} } },
    });
    await run.service.inputs.answer(run.key, { confirm: { result: { action: 'accept', content: {} } } });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getResult()).toEqual({ structuredContent: { echo: 'hello' }, content: [{ type: 'text', text: 'hello' }] });
  });

  it('with --input, ends as a tool error once declined, having echoed nothing', async () => {
    const { spec, handler } = tool('confirm_echo');
    const run = await startDurableTool(spec, handler, { text: 'hello' }, { clientCapabilities: ELICITATION, callbacks: ['confirm'] });
    await run.runner.getOperation('confirm-ask').waitForData(WaitingOperationStatus.COMPLETED);
    await run.service.inputs.answer(run.key, { confirm: { result: { action: 'decline' } } });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getResult()).toEqual({ isError: true, content: [{ type: 'text', text: 'The user declined, so nothing was done.' }] });
    expect(execution.getOperations().map((operation) => operation.getName())).not.toContain('echo');
  });
});
