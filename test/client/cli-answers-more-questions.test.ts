/**
 * The CLI's answers beyond one question of a task: a tool that runs synchronously and asks
 * before the call returns (answered by --answer, or stopped when nothing answers, since there
 * is no handle to answer later), and a call with two questions open at once (by key, and in
 * order), and a form of every SEP-1330 choice shape asked on a terminal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { cliEnv, lastJson, runCli } from './support/cli-process.ts';
import { runOnTerminal } from './support/cli-terminal.ts';

let stack: LocalStack;
let url: string;
let stateDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/conformance/tools' });
  url = stack.url.href;
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-more-questions-'));
  env = cliEnv(stateDir);
});
afterAll(async () => {
  await stack?.close();
  await rm(stateDir, { recursive: true, force: true });
});

const USER = { username: 'ada', email: 'ada@example.com' };

describe.concurrent('questions the CLI meets beyond one task question', { timeout: 180_000 }, () => {
  it('a synchronous tool asks before the call returns: --answer answers it', async () => {
    const run = await runCli(['call', url, 'test_elicitation', '-a', 'message=Who are you?', '--answer', JSON.stringify(USER), '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(lastJson(run))).toContain('ada@example.com');
  });

  it('a synchronous tool whose question nothing answers is stopped, exit 1, saying how to answer it next time', async () => {
    const run = await runCli(['call', url, 'test_elicitation', '-a', 'message=Who are you?'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Who are you?');
    expect(run.stderr).toContain('test_elicitation asked a question while it ran synchronously, and nothing answered it, so the call was stopped');
  });

  it('on a terminal, every SEP-1330 choice shape is a numbered choice, and a synchronous tool gets the choices made', async () => {
    const typed = ['2', '3', '1', '1,3', '', 'a'];
    const run = await runOnTerminal(
      ['call', url, 'test_elicitation_sep1330_enums'],
      env,
      typed.map((type) => ({ when: /: $/, type })),
    );
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toContain('Titled single-select (1-3, optional): ');
    expect(run.screen).toContain('    2) Option Two');
    expect(run.screen).toContain('Untitled multi-select (numbers 1-3, comma-separated, optional): ');
    expect(run.screen).toContain(
      'Elicitation completed: action=accept, content={"untitledSingle":"option2","titledSingle":"value3","legacyEnum":"opt1","untitledMulti":["option1","option3"]}',
    );
  });

  it('two open questions: without answers both are printed, keyed; answer <id> answers them by key', async () => {
    const waiting = await runCli(['call', url, 'multi_input', '--json'], env);
    expect(waiting.code, waiting.stderr).toBe(4);
    const open = lastJson<{ id: string; questions: Array<{ key: string; message: string }>; answerWith: string }>(waiting);
    expect(open.questions.map((q) => q.message).sort()).toEqual([
      'First of two: your name, and do you confirm?',
      'Second of two: your name, and do you confirm?',
    ]);
    const [first, second] = open.questions.map((q) => q.key);
    expect(open.answerWith).toContain(`answer ${open.id} --answer ${first}=`);
    const answered = await runCli(
      ['answer', open.id, '--answer', `${second}={"name":"two","confirm":true}`, '--answer', '{"name":"one","confirm":false}'],
      env,
    );
    expect(answered.code, answered.stderr).toBe(0);
    const joined = await runCli(['join', open.id, '--json'], env);
    expect(joined.code, joined.stderr).toBe(0);
    const text = JSON.stringify(lastJson(joined));
    expect(text).toContain('one');
    expect(text).toContain('two');
  });

  it('two open questions, one --answer: the other is left open (exit 4), then answered by a later call of answer', async () => {
    const waiting = await runCli(['call', url, 'multi_input', '--answer', '{"name":"one","confirm":true}', '--json'], env);
    expect(waiting.code, waiting.stderr).toBe(4);
    const open = lastJson<{ id: string; questions: unknown[] }>(waiting);
    expect(open.questions).toHaveLength(1);
    const answered = await runCli(['answer', open.id, '--answer', '{"name":"two","confirm":true}'], env);
    expect(answered.code, answered.stderr).toBe(0);
    expect((await runCli(['join', open.id], env)).code).toBe(0);
  });
});
