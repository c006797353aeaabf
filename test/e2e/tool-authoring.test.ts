/**
 * Authoring tools (issue 11), end to end: `new-tool` scaffolds a folder that passes
 * `validate-tools` and runs on the local stack (`--input`: one that asks the client first); `validate-tools` prints every problem with
 * its file; a service integration runs from `mocks.json`; a Task without a mock stops
 * startup; an existing machine without a local stand-in is listed and fails naming its ARN.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const EXISTING_ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:orders-pipeline';

/** Runs one of the authoring scripts as `npm run` would, in a fresh Node process. */
function script(name: 'new-tool' | 'validate-tools', args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', `${name}.ts`), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function writeFolder(root: string, name: string, files: Record<string, unknown>): Promise<void> {
  await mkdir(join(root, name), { recursive: true });
  for (const [file, content] of Object.entries(files)) await writeFile(join(root, name, file), JSON.stringify(content));
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool`,
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  invocation: 'sync',
  workflowType: 'EXPRESS',
  ...extra,
});
const getItem = {
  StartAt: 'GetItem',
  States: {
    GetItem: {
      Type: 'Task',
      Resource: 'arn:aws:states:::dynamodb:getItem',
      Parameters: { TableName: 'items', Key: { pk: { 'S.$': '$.arguments.id' } } },
      ResultSelector: { 'name.$': '$.Item.name.S' },
      End: true,
    },
  },
};
const getItemMocks = {
  StateMachines: { reader: { TestCases: { Default: { GetItem: 'Found' } } } },
  MockedResponses: { Found: { 0: { Return: { Item: { pk: { S: 'a' }, name: { S: 'Ada' } } } } } },
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tool-authoring-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function callTool(stack: LocalStack, name: string, args: Record<string, unknown>) {
  return ok(await modernRequest(stack.url, 'tools/call', { name, arguments: args }));
}

describe('npm run new-tool', () => {
  it.each([
    ['JSONata with a worker stub', ['--both', '--jsonata', '--worker']],
    ['JSONPath without a worker', ['--sync']],
  ])('scaffolds a folder (%s) that passes validate-tools and runs locally', async (_, flags) => {
    const root = await mkdtemp(join(dir, 'scaffold-'));
    const [toolsDir, workersDir] = [join(root, 'tools'), join(root, 'workers')];
    const created = script('new-tool', ['echo_text', ...flags, '--tools-dir', toolsDir, '--workers-dir', workersDir]);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toContain('tool.json');
    if (flags.includes('--worker')) expect(created.stdout).toContain('echo-text.ts');

    const validated = script('validate-tools', [toolsDir, '--workers', workersDir]);
    expect(validated.status, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('1 tool valid: echo_text');

    const stack = await startTestStack({ toolsDir, workersDir });
    try {
      const result = await callTool(stack, 'echo_text', { text: 'hello' });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ echo: 'hello' });
    } finally {
      await stack.close();
    }
  });

  it.each([
    ['JSONPath', ['--both', '--input']],
    ['JSONata with a worker stub', ['--both', '--input', '--jsonata', '--worker']],
  ])(
    'scaffolds a tool that asks the client to confirm first (--input, %s): it asks, runs once accepted, and ends as an error once declined',
    async (_, flags) => {
      const root = await mkdtemp(join(dir, 'scaffold-input-'));
      const [toolsDir, workersDir] = [join(root, 'tools'), join(root, 'workers')];
      const created = script('new-tool', ['confirm_echo', ...flags, '--tools-dir', toolsDir, '--workers-dir', workersDir]);
      expect(created.status, created.stderr).toBe(0);
      // The built-in request_input worker is found with the server, whatever --workers names.
      const validated = script('validate-tools', [toolsDir, '--workers', workersDir]);
      expect(validated.status, validated.stderr).toBe(0);

      const stack = await startTestStack({ toolsDir, workersDir });
      try {
        // A 2026-07-28 synchronous call by a client that can answer elicitation (SEP-2322 rounds).
        const options = { capabilities: { elicitation: {} } };
        const call = (extra: Record<string, unknown> = {}) =>
          modernRequest(stack.url, 'tools/call', { name: 'confirm_echo', arguments: { text: 'hello' }, ...extra }, options);
        const asked = ok(await call());
        expect(asked.resultType).toBe('input_required');
        expect(asked.inputRequests.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Echo "hello"?' } });
        const accepted = ok(await call({ inputResponses: { confirm: { action: 'accept', content: {} } }, requestState: asked.requestState }));
        expect(accepted.isError).toBeFalsy();
        expect(accepted.structuredContent).toEqual({ echo: 'hello' });

        const again = ok(await call());
        const declined = ok(await call({ inputResponses: { confirm: { action: 'decline' } }, requestState: again.requestState }));
        expect(declined.isError).toBe(true);
        expect(JSON.stringify(declined.content)).toContain('The user declined');
      } finally {
        await stack.close();
      }
    },
  );

  it('makes a sync tool that asks STANDARD, since an Express workflow cannot wait for a task token', async () => {
    const root = await mkdtemp(join(dir, 'scaffold-sync-input-'));
    const toolsDir = join(root, 'tools');
    const created = script('new-tool', ['ask_sync', '--sync', '--input', '--tools-dir', toolsDir]);
    expect(created.status, created.stderr).toBe(0);
    const config = JSON.parse(await readFile(join(toolsDir, 'ask_sync', 'tool.json'), 'utf8')) as { workflowType: string };
    expect(config.workflowType).toBe('STANDARD');
    const validated = script('validate-tools', [toolsDir]);
    expect(validated.status, validated.stderr).toBe(0);
  });

  it('refuses to overwrite an existing folder', () => {
    const again = script('new-tool', ['quick_calculation', '--sync']);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/quick_calculation already exists/);
  });
});

describe('npm run validate-tools', () => {
  it('prints every problem with its file, not just the first, and exits 1', async () => {
    const toolsDir = await mkdtemp(join(dir, 'broken-'));
    await writeFolder(toolsDir, 'a_tool', { 'tool.json': tool('a_tool', { invocation: 'sometimes' }), 'definition.asl.json': { StartAt: 'X', States: {} } });
    await writeFolder(toolsDir, 'b_tool', {
      'tool.json': tool('b_tool', { permissions: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }] }),
      'definition.asl.json': { StartAt: 'Nowhere', States: { A: { Type: 'Pass', End: true } } },
    });
    await writeFolder(toolsDir, 'reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem });
    const run = script('validate-tools', [toolsDir]);
    expect(run.status).toBe(1);
    const lines = run.stderr.split('\n').filter((line) => line.includes(': '));
    expect(lines.some((line) => line.includes(join('a_tool', 'tool.json')) && line.includes('invocation'))).toBe(true);
    expect(lines.some((line) => line.includes(join('b_tool', 'tool.json')) && line.includes('contains a wildcard: add "reason"'))).toBe(true);
    expect(lines.some((line) => line.includes(join('b_tool', 'definition.asl.json')) && line.includes('not valid Amazon States Language'))).toBe(true);
    expect(lines.some((line) => line.includes(join('reader', 'definition.asl.json')) && line.includes('state "GetItem"') && line.includes('mocks.json'))).toBe(
      true,
    );
    expect(run.stderr).toMatch(/\n\d+ problems in /);
  });
});

describe('the local stack', () => {
  it('refuses to start with a Task it cannot run, naming the folder, the state and what to add', async () => {
    const toolsDir = await mkdtemp(join(dir, 'unmocked-'));
    await writeFolder(toolsDir, 'reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem });
    const error = (await startTestStack({ toolsDir }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(join(toolsDir, 'reader', 'definition.asl.json'));
    expect(error.message).toMatch(
      /state "GetItem" calls "arn:aws:states:::dynamodb:getItem", which cannot run locally: add mocks\.json with a mocked response for it/,
    );
  });

  describe('with a mocked service integration and an existing machine without a stand-in', () => {
    let stack: LocalStack;
    beforeAll(async () => {
      const toolsDir = await mkdtemp(join(dir, 'integrations-'));
      await writeFolder(toolsDir, 'reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem, 'mocks.json': getItemMocks });
      await writeFolder(toolsDir, 'orders', { 'tool.json': tool('orders', { stateMachineArn: EXISTING_ARN }) });
      // An existing machine with its own input contract, run locally from a stand-in definition.
      await writeFolder(toolsDir, 'shipping', {
        'tool.json': tool('shipping', {
          stateMachineArn: EXISTING_ARN.replace(/:stateMachine:.*/, ':stateMachine:shipping'),
          input: 'arguments',
          invocation: 'async',
          workflowType: 'STANDARD',
        }),
        'definition.asl.json': { StartAt: 'Ship', States: { Ship: { Type: 'Pass', Parameters: { 'shipped.$': '$.id' }, End: true } } },
      });
      stack = await startTestStack({ toolsDir });
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('runs a DynamoDB getItem from mocks.json', async () => {
      const result = await callTool(stack, 'reader', { id: 'a' });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ name: 'Ada' });
    });

    it('an existing machine with input "arguments" receives the arguments alone, and its result still reaches the task', async () => {
      const ext = { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
      const { taskId } = ok(await modernRequest(stack.url, 'tools/call', { name: 'shipping', arguments: { id: 'parcel-1' } }, ext));
      const done = await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId }, ext), ['completed', 'failed']);
      expect(done.result.structuredContent).toEqual({ shipped: 'parcel-1' });
    });

    it('lists the existing machine, and calling it fails naming the ARN and how to run it locally', async () => {
      const listed = ok(await modernRequest(stack.url, 'tools/list'));
      expect(listed.tools.map((t: { name: string }) => t.name)).toContain('orders');
      const result = await callTool(stack, 'orders', {});
      expect(result.isError).toBe(true);
      const text = JSON.stringify(result.content);
      expect(text).toContain(EXISTING_ARN);
      expect(text).toMatch(/definition\.asl\.json or a mocks\.json beside the tool's tool\.json/);
    });
  });
});
