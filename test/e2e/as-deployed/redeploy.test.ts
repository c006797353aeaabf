/**
 * A redeploy, locally: assembly A runs on a data directory and starts operations; the server
 * stops; a changed app (one tool changed, one removed) is synthesized into assembly B, which
 * starts on the same data directory. The operations made under A are still answered: the
 * finished one with its stored result, the one cut off by the stop as not succeeded.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { cachedSourceTree, deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { modernRequest, type CallOptions } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const temporary: string[] = [];
let running: DeployedLocalStack | undefined;

afterAll(async () => {
  await running?.close();
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

const ext = (stack: DeployedLocalStack, method: string, params: Record<string, unknown> = {}, options: CallOptions = {}) =>
  modernRequest(stack.url, method, params, { capabilities: EXT, ...options });

async function startTask(stack: DeployedLocalStack, name: string, args: Record<string, unknown>): Promise<string> {
  const created = ok(await ext(stack, 'tools/call', { name, arguments: args }));
  expect(created.resultType).toBe('task');
  return created.taskId as string;
}

/**
 * The repository's tools with summarize_numbers' description changed and analyze_dataset removed,
 * in the project's cache (by content, so assembly B is synthesized once, not every run): a
 * durable tool is bundled from the folder holding both its durable.ts and the package
 * (cdk/durable-tool-function.ts projectRootOf), where esbuild runs and tsconfig.json resolves
 * `async-mcp/durable`; from the OS temp dir that folder would be `/`.
 */
function changedTools(): string {
  return cachedSourceTree('redeploy-tools', (dir) => {
    cpSync(resolve(import.meta.dirname, '../../../state-machines'), dir, { recursive: true });
    rmSync(join(dir, 'analyze_dataset'), { recursive: true });
    const file = join(dir, 'summarize_numbers', 'tool.json');
    const tool = JSON.parse(readFileSync(file, 'utf8')) as { description: string };
    writeFileSync(file, JSON.stringify({ ...tool, description: `${tool.description} (Changed in the second deploy.)` }, null, 2));
  });
}

describe('a redeploy on the same data directory', () => {
  it('answers the operations made under the first assembly: a finished result as stored, a run cut off by the stop as ended without success', async () => {
    const data = mkdtempSync(join(tmpdir(), 'redeploy-data-'));
    temporary.push(data);
    const tools = changedTools();
    // Both assemblies first: synthesizing B while A runs would skew A's timings on two cores.
    const [assemblyA, assemblyB] = await Promise.all([deployedAssembly(NO_AUTH), deployedAssembly({ ...NO_AUTH, toolsDir: tools }, [tools])]);

    running = (await startAssemblyStack(assemblyA, { dataDir: data })).stack;
    const finished = await startTask(running, 'summarize_numbers', { numbers: [1, 2, 3, 4] });
    const done = await pollUntilStatus(() => ext(running!, 'tasks/get', { taskId: finished }), ['completed', 'failed']);
    expect(done.status).toBe('completed');
    const cutOff = await startTask(running, 'analyze_dataset', { rows: 10, delaySeconds: 86_400 });
    expect(ok(await ext(running, 'tasks/get', { taskId: cutOff })).status).toBe('working');
    await running.close();
    running = undefined;

    running = (await startAssemblyStack(assemblyB, { dataDir: data })).stack;
    const tools2 = ok(await ext(running, 'tools/list')).tools as Array<{ name: string; description: string }>;
    expect(tools2.map((t) => t.name)).not.toContain('analyze_dataset');
    expect(tools2.find((t) => t.name === 'summarize_numbers')!.description).toMatch(/Changed in the second deploy/);

    // The finished operation's result is served as it was stored under A.
    const again = ok(await ext(running, 'tasks/get', { taskId: finished }));
    expect(again.status).toBe('completed');
    expect(again.result).toEqual(done.result);
    // The run the stop cut off ends failed, though B no longer has its tool.
    const ended = await pollUntilStatus(() => ext(running!, 'tasks/get', { taskId: cutOff }), ['failed', 'completed', 'cancelled'], { timeout: 60_000 });
    // A failed execution is the tool's error (completed, isError) in this revision; either way it did not succeed.
    expect(ended.status === 'failed' || ended.result?.isError === true, JSON.stringify(ended)).toBe(true);
  }, 600_000);
});
