/**
 * On a terminal, the CLI asks a tool's question there: the message, the form's field, then
 * accept, decline or cancel, in `call`, `join` and `answer`, in every dialect and for both
 * approve_deployment and approve_deployment_durable. A pseudo-terminal stands in for the user's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { cliEnv, lastJson, runCli } from './support/cli-process.ts';
import { type Keystrokes, runOnTerminal } from './support/cli-terminal.ts';

const CHANGES = ['-a', 'environment=staging', '-a', 'changes=["api: v2.3.1"]'];
/** The user reads the question, types a comment, then accepts. */
const ACCEPT_WITH = (comment: string): Keystrokes[] => [
  { when: /Deploy 1 change(s)? to staging\?[\s\S]*Comment \(text up to 500 characters, optional\): $/, type: comment },
  { when: /\[a\]ccept, \[d\]ecline or \[c\]ancel\? \[a\]: $/, type: 'a' },
];

let stack: LocalStack;
let url: string;
let stateDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  stack = await startTestStack();
  url = stack.url.href;
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-terminal-'));
  env = cliEnv(stateDir);
});
afterAll(async () => {
  await stack?.close();
  await rm(stateDir, { recursive: true, force: true });
});

/** The tool's result as --json printed it, from a screen that shows the prompts too. */
function resultOn(screen: string): Record<string, unknown> {
  const line = screen
    .split(/\r?\n/)
    .map((text) => text.replace(/^.*\r(?!$)/, ''))
    .findLast((text) => text.startsWith('{'));
  return (JSON.parse(line ?? '{}') as { structuredContent?: Record<string, unknown> }).structuredContent ?? {};
}

describe.concurrent('the question, asked on a terminal', { timeout: 120_000 }, () => {
  it('call, tasks, approve_deployment: the prompt accepts with a comment and the call ends deployed', async () => {
    const run = await runOnTerminal(['call', url, 'approve_deployment', ...CHANGES, '--dialect', 'tasks', '--json'], env, ACCEPT_WITH('from the terminal'));
    expect(run.code, run.screen).toBe(0);
    expect(resultOn(run.screen)).toMatchObject({ deployed: true, decision: 'accept', comment: 'from the terminal' });
  });

  it('call, tasks-2025-11-25, approve_deployment_durable: declined at the prompt, nothing is deployed', async () => {
    const run = await runOnTerminal(['call', url, 'approve_deployment_durable', ...CHANGES, '--dialect', 'tasks-2025-11-25', '--json'], env, [
      { when: /Comment .*: $/, type: '' },
      { when: /\[a\]ccept, \[d\]ecline or \[c\]ancel\? \[a\]: $/, type: 'd' },
    ]);
    expect(run.code, run.screen).toBe(0);
    expect(resultOn(run.screen)).toMatchObject({ deployed: false, decision: 'decline' });
  });

  it('join, sep-1391, approve_deployment_durable: a detached call is answered at the prompt of a later join', async () => {
    const { id } = lastJson(await runCli(['call', url, 'approve_deployment_durable', ...CHANGES, '--dialect', 'sep-1391', '--detach', '--json'], env));
    const run = await runOnTerminal(['join', id, '--json'], env, ACCEPT_WITH('joined'));
    expect(run.code, run.screen).toBe(0);
    expect(resultOn(run.screen)).toMatchObject({ deployed: true, comment: 'joined' });
  });

  it('Ctrl-C at the prompt, tasks-2025-11-25, approve_deployment: exits 130 saying the call keeps running and how to join it', async () => {
    const run = await runOnTerminal(['call', url, 'approve_deployment', ...CHANGES, '--dialect', 'tasks-2025-11-25'], env, [
      { when: /Comment .*: $/, type: '\x03' },
    ]);
    expect(run.code, run.screen).toBe(130);
    const id = /Join it with: npm run cli -- join (\S+)/.exec(run.screen)?.[1] ?? '';
    const status = await runCli(['status', id, '--json'], env);
    expect(lastJson(status)).toMatchObject({ id, state: 'input_required' });
    await runCli(['cancel', id], env);
  });

  it('answer <id>, sep-1391, approve_deployment: with no --answer, it prompts, and the call goes on to deploy', async () => {
    const waiting = await runCli(['call', url, 'approve_deployment', ...CHANGES, '--dialect', 'sep-1391', '--json'], env);
    expect(waiting.code, waiting.stderr).toBe(4);
    const { id } = lastJson(waiting);
    const run = await runOnTerminal(['answer', id], env, ACCEPT_WITH('answered'));
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toContain(`Answered; ${id} is`);
    const joined = await runCli(['join', id, '--json'], env);
    expect(lastJson(joined).structuredContent).toMatchObject({ deployed: true, comment: 'answered' });
  });
});
