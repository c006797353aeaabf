/**
 * `npm run new-tool -- <name> --durable` (issue 38): a tool folder written in TypeScript,
 * tool.json and a durable.ts built with withDurableExecution and the async-mcp/durable
 * helpers, that passes validate-tools as it is.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';

/** Runs one of the authoring scripts as `npm run` would, in a fresh Node process. */
function script(name: 'new-tool' | 'validate-tools', args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', `${name}.ts`), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const SCAFFOLDS = [
  ['report_async', []],
  ['confirm_both', ['--input', '--both']],
  ['quick_sync', ['--sync']],
] as const;

let dir: string;
let toolsDir: string;
let created: ReturnType<typeof script>[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'new-tool-durable-'));
  toolsDir = join(dir, 'tools');
  created = SCAFFOLDS.map(([name, flags]) => script('new-tool', [name, '--durable', ...flags, '--tools-dir', toolsDir]));
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const read = (tool: string, file: string) => readFile(join(toolsDir, tool, file), 'utf8');

describe('npm run new-tool -- <name> --durable', () => {
  it('writes tool.json and durable.ts, and no definition', async () => {
    for (const run of created) expect(run.status, run.stderr).toBe(0);
    for (const [name] of SCAFFOLDS) expect((await readdir(join(toolsDir, name))).sort()).toEqual(['durable.ts', 'tool.json']);
    expect(created[0]?.stdout).toContain('durable.ts');
  });

  it('passes validate-tools as it is: it compiles and exports handler', () => {
    const validated = script('validate-tools', [toolsDir]);
    expect(validated.status, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('3 tools valid: confirm_both, quick_sync, report_async');
  });

  it('loads as durable tools, STANDARD whatever the invocation, with the execution timeout in tool.json', async () => {
    const folders = await loadToolFolders(toolsDir);
    expect(folders.map((folder) => [folder.config.name, folder.config.invocation, folder.config.workflowType, folder.durable?.file])).toEqual([
      ['confirm_both', 'both', 'STANDARD', join(toolsDir, 'confirm_both', 'durable.ts')],
      ['quick_sync', 'sync', 'STANDARD', join(toolsDir, 'quick_sync', 'durable.ts')],
      ['report_async', 'async', 'STANDARD', join(toolsDir, 'report_async', 'durable.ts')],
    ]);
    const config = JSON.parse(await read('quick_sync', 'tool.json')) as Record<string, unknown>;
    expect(config).not.toHaveProperty('workflowType');
    expect(config.durable).toEqual({ executionTimeoutSeconds: 86_400 });
  });

  it('uses withDurableExecution and reportProgress from async-mcp/durable, and askClient only with --input', async () => {
    const plain = await read('report_async', 'durable.ts');
    expect(plain).toContain("import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';");
    expect(plain).toContain("import { reportProgress, type ToolEvent } from 'async-mcp/durable';");
    expect(plain).toContain('export const handler = withDurableExecution(');
    expect(plain).not.toContain('askClient');

    const asking = await read('confirm_both', 'durable.ts');
    expect(asking).toContain("import { askClient, DurableToolError, INPUT_ERRORS, reportProgress, type ToolEvent } from 'async-mcp/durable';");
    // The question a request_input state asks in the state machine scaffold, under the same key.
    expect(asking).toContain("{ method: 'elicitation/create', params: { message: `Echo \"${text}\"?`, requestedSchema: { type: 'object', properties: {} } } }");
    expect(asking).toContain("{ key: 'confirm', timeout: { hours: 1 } }");
  });

  it('refuses --jsonata and --worker with --durable, which are for a state machine', () => {
    for (const flag of ['--jsonata', '--worker']) {
      const refused = script('new-tool', ['other_tool', '--durable', flag, '--tools-dir', toolsDir]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain('a durable tool (--durable) is its own code');
    }
  });
});
