/**
 * The CLI answers a tool's question without a terminal, in every async dialect, for a
 * state-machine tool (approve_deployment) and a durable one (approve_deployment_durable):
 * `--answer` accepts or declines in a script; with no answer the call is left waiting, the
 * CLI prints the question and the command that answers it and exits 4, and `answer <id>`
 * from another process then lets it finish.
 */
import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { cliEnv, lastJson, runCli } from './support/cli-process.ts';

const QUESTION_OPEN = 4;
/** Several CLI processes one after another, on a machine the other tests share. */
const SLOW = 180_000;
const CHANGES = ['-a', 'environment=staging', '-a', 'changes=["api: v2.3.1","web: v1.9.0"]'];
const MESSAGE = 'Deploy 2 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0';

let stack: LocalStack;
let url: string;
const stateDirs: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  url = stack.url.href;
});
afterAll(async () => {
  await stack?.close();
  await Promise.all(stateDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A state directory of the test's own, so what is left in it is that test's. */
async function ownEnv(): Promise<{ env: NodeJS.ProcessEnv; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-answers-'));
  stateDirs.push(dir);
  return { env: cliEnv(dir), dir };
}

const handles = async (dir: string) => (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.json'));

interface Deployment {
  deployed: boolean;
  decision: string;
  comment?: string;
}

describe.concurrent('call --answer, without a terminal', { timeout: SLOW }, () => {
  it.for([
    ['tasks', 'approve_deployment'],
    ['tasks', 'approve_deployment_durable'],
    ['tasks-2025-11-25', 'approve_deployment'],
    ['tasks-2025-11-25', 'approve_deployment_durable'],
    ['sep-1391', 'approve_deployment'],
    ['sep-1391', 'approve_deployment_durable'],
  ])('%s, %s: accepting ends deployed, and the finished call leaves no handle behind', async ([dialect = '', tool = '']) => {
    const { env, dir } = await ownEnv();
    const run = await runCli(['call', url, tool, ...CHANGES, '--dialect', dialect, '--answer', '{"comment":"ship it"}', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run).structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: 'ship it' } satisfies Deployment);
    expect(await handles(dir)).toEqual([]);
  });

  it.for([
    ['tasks', 'approve_deployment', 'decline'],
    ['tasks-2025-11-25', 'approve_deployment_durable', 'approval=decline'],
    ['sep-1391', 'approve_deployment', 'decline'],
  ])('%s, %s: --answer %s ends not deployed', async ([dialect = '', tool = '', answer = '']) => {
    const { env } = await ownEnv();
    const run = await runCli(['call', url, tool, ...CHANGES, '--dialect', dialect, '--answer', answer, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run).structuredContent).toMatchObject({ deployed: false, decision: 'decline' } satisfies Deployment);
  });

  it('an answer that does not fit the form is refused before it is sent, naming the field; the call still waits (exit 4)', async () => {
    const { env, dir } = await ownEnv();
    const long = 'x'.repeat(501);
    const run = await runCli(['call', url, 'approve_deployment', ...CHANGES, '--answer', JSON.stringify({ comment: long }), '--json'], env);
    expect(run.code, run.stderr).toBe(QUESTION_OPEN);
    expect(run.stderr).toMatch(/"comment"/);
    const waiting = lastJson<{ id: string; state: string; error: { field: string } }>(run);
    expect(waiting).toMatchObject({ state: 'input_required', error: { field: 'comment' } });
    expect(await handles(dir)).toEqual([`${waiting.id}.json`]);
    await runCli(['cancel', waiting.id], env);
  });
});

describe.concurrent('a question nothing answers, without a terminal', { timeout: SLOW }, () => {
  it.for([
    ['tasks', 'approve_deployment_durable'],
    ['tasks-2025-11-25', 'approve_deployment'],
    ['sep-1391', 'approve_deployment_durable'],
  ])(
    '%s, %s: exits 4 printing the question and its answer command; status shows it; answer <id> from another process completes it',
    async ([dialect = '', tool = '']) => {
      const { env, dir } = await ownEnv();
      const run = await runCli(['call', url, tool, ...CHANGES, '--dialect', dialect, '--json'], env);
      expect(run.code, run.stderr).toBe(QUESTION_OPEN);
      const waiting = lastJson<{ id: string; state: string; questions: Array<{ key: string; message: string }>; answerWith: string }>(run);
      expect(waiting).toMatchObject({ state: 'input_required', questions: [{ message: MESSAGE }] });
      expect(waiting.answerWith).toBe(`npm run cli -- answer ${waiting.id} --answer '{"comment":"…"}'`);
      expect(run.stderr).toContain('Deploy 2 changes to staging?');
      expect(run.stderr).toContain(`Answer it with: npm run cli -- answer ${waiting.id} --answer`);
      // The call is left waiting, its handle kept for the answer.
      await access(join(dir, `${waiting.id}.json`));

      const status = await runCli(['status', waiting.id], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`${waiting.id}  input_required`);
      expect(status.stdout).toContain('Deploy 2 changes to staging?');

      const answered = await runCli(['answer', waiting.id, '--answer', '{"comment":"later"}', '--json'], env);
      expect(answered.code, answered.stderr).toBe(0);
      expect(lastJson(answered)).toMatchObject({ id: waiting.id });

      const joined = await runCli(['join', waiting.id, '--json'], env);
      expect(joined.code, joined.stderr).toBe(0);
      expect(lastJson(joined).structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: 'later' } satisfies Deployment);
    },
  );

  it('answer <id> on a call with no open question says so and exits 1', async () => {
    const { env } = await ownEnv();
    const waiting = await runCli(['call', url, 'approve_deployment', ...CHANGES, '--json'], env);
    expect(waiting.code, waiting.stderr).toBe(QUESTION_OPEN);
    const { id } = lastJson(waiting);
    const answered = await runCli(['answer', id, '--answer', 'decline'], env);
    // Answered once: nothing is open the second time, whatever the state by then.
    const again = await runCli(['answer', id, '--answer', 'decline'], env);
    expect([answered.code, again.code]).toEqual([0, 1]);
    expect(again.stderr).toContain(`${id} has no open question`);
  });
});
