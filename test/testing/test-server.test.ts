/**
 * async-mcp/testing from source, against this repository's tools: approve_deployment and its
 * durable twin answered by key and by a function in each async dialect, a question the test
 * does not answer failing the call by name, progress and log lines read, and close leaving
 * no port open.
 */
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_DIALECTS, type Question } from '../../client/index.ts';
import { startTestServer, type TestServer, UnansweredQuestionError } from '../../testing/index.ts';

const DEPLOY = { environment: 'staging', changes: ['api: v2.3.1', 'web: v1.9.0'] };
const TOOLS = ['approve_deployment', 'approve_deployment_durable'] as const;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe.each(TOOLS)('%s', (tool) => {
  describe.each(ASYNC_DIALECTS)('in the %s dialect', (dialect) => {
    it('an answer given by key accepts the question, and the tool deploys with the comment', async () => {
      const run = await server.call(tool, DEPLOY, { dialect, answers: { approval: { comment: 'ship it' } } });
      expect(run.dialect).toBe(dialect);
      expect(run.result.isError).toBeFalsy();
      expect(run.result.structuredContent).toMatchObject({ environment: 'staging', deployed: true, decision: 'accept', comment: 'ship it' });
      expect(run.questions).toEqual([
        expect.objectContaining({
          key: 'approval',
          message: expect.stringContaining('staging'),
          answer: { action: 'accept', content: { comment: 'ship it' } },
        }),
      ]);
    });

    it('an answer from a function sees the question and declines it: nothing is deployed', async () => {
      const seen: Question[] = [];
      const run = await server.call(tool, DEPLOY, {
        dialect,
        answers: (question) => {
          seen.push(question);
          return 'decline';
        },
      });
      expect(run.result.structuredContent).toMatchObject({ deployed: false, decision: 'decline' });
      expect(seen.map((question) => question.key)).toEqual(['approval']);
      expect(seen[0]?.requestedSchema.properties).toHaveProperty('comment');
    });
  });

  it('a question the test does not answer fails the call with an error naming its key and message, and the call is cancelled', async () => {
    const failure = await server.call(tool, DEPLOY, { answers: { other: 'cancel' } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UnansweredQuestionError);
    expect((failure as UnansweredQuestionError).question.key).toBe('approval');
    expect((failure as Error).message).toMatch(/"approval".*Deploy 2 changes to staging/);
  });

  it('reads the progress the tool reported, in order (the state machine reports none)', async () => {
    const run = await server.call(tool, DEPLOY, { answers: { approval: { action: 'accept', content: {} } } });
    expect(run.result.structuredContent).toMatchObject({ deployed: true });
    const expected =
      tool === 'approve_deployment_durable'
        ? [
            { progress: 1, total: 3, message: 'Planned 2 changes; waiting for approval' },
            { progress: 2, total: 3, message: 'Approved: deploying 2 changes' },
            { progress: 3, total: 3, message: expect.any(String) },
          ]
        : [];
    expect(run.progress).toEqual(expected);
  });
});

describe('a tool that reports progress and log lines', () => {
  let fixtures: TestServer;
  beforeAll(async () => {
    fixtures = await startTestServer({ tools: 'test/fixtures/input-tools', skipWaits: true });
  });
  afterAll(async () => {
    await fixtures?.close();
  });

  it('run.logs holds every log line at every level, and run.progress every progress report, each in order', async () => {
    const run = await fixtures.call('progress_steps', {});
    expect(run.logs).toEqual([
      { level: 'debug', logger: 'steps', data: { phase: 'preparing' } },
      { level: 'info', logger: 'steps', data: 'starting' },
      { level: 'warning', data: 'careful' },
    ]);
    expect(run.progress).toEqual([
      { progress: 1, total: 3, message: 'first step' },
      { progress: 2, total: 3, message: 'second step' },
      { progress: 3, total: 3, message: 'third step' },
    ]);
  });
});

describe('the sync dialect: a plain initialize-era tools/call', () => {
  let fixtures: TestServer;
  beforeAll(async () => {
    fixtures = await startTestServer({ tools: 'test/fixtures/input-tools', skipWaits: true });
  });
  afterAll(async () => {
    await fixtures?.close();
  });

  it('answers the question the call asks on its own stream, by key', async () => {
    const run = await fixtures.call('ask_confirm', { subject: 'the release' }, { dialect: 'sync', answers: { confirm: { comment: 'go' } } });
    expect(run.dialect).toBe('sync');
    expect(run.result.structuredContent).toEqual({ action: 'accept', content: { comment: 'go' } });
    expect(run.questions).toEqual([expect.objectContaining({ key: 'confirm', message: 'Go ahead with the release?' })]);
  });

  it('reads the progress and every log line the call streams', async () => {
    const run = await fixtures.call('progress_steps', {}, { dialect: 'sync' });
    expect(run.logs.map((line) => line.level)).toEqual(['debug', 'info', 'warning']);
    expect(run.progress.map((report) => report.message)).toEqual(['first step', 'second step', 'third step']);
  });

  it('a question it does not answer fails the call, naming it', async () => {
    await expect(fixtures.call('ask_confirm', { subject: 'the release' }, { dialect: 'sync' })).rejects.toThrow(/"confirm".*Go ahead with the release/);
  });
});

describe('a tool that suggests the default poll interval (5 s)', () => {
  it('a durable call answered mid-run ends without waiting out the interval: the kit polls on its own cadence', async () => {
    await using slow = await startTestServer({ tools: 'test/fixtures/testing-tools' });
    const started = Date.now();
    const run = await slow.call('ask_durable_slow_poll', {}, { answers: { confirm: {} } });
    expect(run.result.structuredContent).toEqual({ action: 'accept' });
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe('skipWaits', () => {
  it("a durable tool's context.wait of an hour ends at once", async () => {
    await using durable = await startTestServer({ tools: 'test/fixtures/durable-tools', skipWaits: true });
    const started = Date.now();
    const run = await durable.call('wait_and_sum', { numbers: [1, 2, 3], waitSeconds: 3600 }, { timeoutMs: 20_000 });
    expect(run.result.structuredContent).toEqual({ sum: 6, count: 3 });
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('without it, the wait is waited: the call is still running at its timeout, and is cancelled', async () => {
    await using durable = await startTestServer({ tools: 'test/fixtures/durable-tools' });
    await expect(durable.call('wait_and_sum', { numbers: [1], waitSeconds: 3600 }, { timeoutMs: 3000 })).rejects.toThrow(/did not end within 3000 ms/);
  });
});

describe('close', () => {
  it('leaves no port open, and closing again does nothing', async () => {
    const own = await startTestServer();
    const { port } = own.url;
    await own.close();
    await own.close();
    const refused = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port: Number(port) });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    await expect(own.call('approve_deployment', DEPLOY)).rejects.toThrow(/closed/);
  });
});
