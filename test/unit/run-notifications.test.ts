/** Reports turned into notifications for one waiting call: each once, in order, filtered by token and level; followed from the store while the call waits. */
import { describe, expect, it, vi } from 'vitest';
import type { LogLevel } from '../../lambdas/operations/operation.ts';
import {
  progressOf,
  progressTokenOf,
  RunNotifications,
  type OutgoingNotification,
  type RunNotificationsOptions,
} from '../../lambdas/mcp/calls/run-notifications.ts';
import { coreHarness, memoryLogger } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

async function started() {
  const h = coreHarness();
  const record = await h.service.start({ ownerId: 'o1', tool: testTool({ name: 'job' }), arguments: {}, token: 't1', dialect: 'sync' });
  const report = (body: unknown) => h.service.reports.report({ operation: record, executionName: record.executionName, report: body });
  return { ...h, record, report, read: () => h.service.readCurrent(record) };
}

function notifications(options: Partial<RunNotificationsOptions> = {}) {
  const sent: OutgoingNotification[] = [];
  const logLevel = vi.fn(async (): Promise<LogLevel | undefined> => undefined);
  const logger = memoryLogger();
  const run = new RunNotifications({
    progressToken: 'tok',
    logLevel,
    notify: async (notification) => {
      sent.push(notification);
    },
    logger,
    requestId: 'r1',
    ...options,
  });
  return { run, sent, logLevel, logger };
}

const params = (sent: OutgoingNotification[]) => sent.map((n) => n.params);

describe('RunNotifications', () => {
  it('sends each report once and in order, however often and however stale the records it is given', async () => {
    const { report, read } = await started();
    const { run, sent } = notifications();
    await report({ progress: 1, total: 4 });
    const first = await read();
    await report({ level: 'info', data: 'half' });
    await report({ progress: 2, total: 4, message: 'two' });
    const second = await read();
    await Promise.all([run.send(first), run.send(second), run.send(first), run.send(second)]);
    expect(sent).toEqual([
      { method: 'notifications/progress', params: { progressToken: 'tok', progress: 1, total: 4 } },
      { method: 'notifications/message', params: { level: 'info', data: 'half' } },
      { method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, total: 4, message: 'two' } },
    ]);
  });

  it('without a progressToken no progress goes out, and log lines still do', async () => {
    const { report, read } = await started();
    const { run, sent } = notifications({ progressToken: undefined });
    await report({ progress: 1 });
    await report({ level: 'warning', logger: 'db', data: { slow: true } });
    await run.send(await read());
    expect(sent).toEqual([{ method: 'notifications/message', params: { level: 'warning', logger: 'db', data: { slow: true } } }]);
  });

  it('"The progress value MUST increase with each notification": a report that does not is left out', async () => {
    const { report, read } = await started();
    const { run, sent } = notifications({ progressToken: 7 });
    await report({ progress: 0, total: 100 });
    await report({ progress: 0, total: 100, message: 'still nothing' });
    await report({ progress: 50, total: 100 });
    await run.send(await read());
    expect(params(sent)).toEqual([
      { progressToken: 7, progress: 0, total: 100 },
      { progressToken: 7, progress: 50, total: 100 },
    ]);
  });

  it('with no level set, info and above go out (debug does not); the level is read once, and only when a log line shows up', async () => {
    const { report, read } = await started();
    const { run, sent, logLevel } = notifications();
    await report({ progress: 1 });
    await run.send(await read());
    expect(logLevel).not.toHaveBeenCalled();
    for (const level of ['debug', 'info', 'notice', 'emergency']) await report({ level, data: level });
    await run.send(await read());
    expect(logLevel).toHaveBeenCalledTimes(1);
    expect(sent.filter((n) => n.method === 'notifications/message').map((n) => n.params.level)).toEqual(['info', 'notice', 'emergency']);
  });

  it("the principal's level filters: error lets error and above through", async () => {
    const { report, read } = await started();
    const { run, sent } = notifications({ logLevel: async () => 'error' });
    for (const level of ['info', 'warning', 'error', 'critical']) await report({ level, data: level });
    await run.send(await read());
    expect(params(sent).map((p) => p.level)).toEqual(['error', 'critical']);
  });

  it('a level that cannot be read falls back to info, and says so without failing the call', async () => {
    const { report, read } = await started();
    const { run, sent, logger } = notifications({ logLevel: async () => Promise.reject(new Error('throttled')) });
    await report({ level: 'debug', data: 'd' });
    await report({ level: 'info', data: 'i' });
    await run.send(await read());
    expect(params(sent)).toEqual([{ level: 'info', data: 'i' }]);
    expect(logger.lines).toEqual([{ level: 'warn', message: 'log level not read: the default applies', fields: { requestId: 'r1', error: 'Error' } }]);
  });

  it('once a notification cannot be sent (the client went away), nothing more is tried and the call goes on', async () => {
    const { report, read } = await started();
    const notify = vi.fn(async () => Promise.reject(new Error('Not connected')));
    const { run, logger } = notifications({ notify });
    await report({ progress: 1 });
    await report({ progress: 2 });
    await run.send(await read());
    await report({ progress: 3 });
    await run.send(await read());
    expect(notify).toHaveBeenCalledTimes(1);
    expect(logger.lines.map((l) => l.message)).toEqual(['progress notifications stopped: the response stream is closed']);
  });
});

describe('progress for status answers', () => {
  it('progressOf is the latest progress report, without its number and time; none before the first', async () => {
    const { report, read } = await started();
    expect(progressOf(await read())).toBeUndefined();
    await report({ progress: 3, total: 9, message: 'a third' });
    await report({ level: 'info', data: 'a log line is not progress' });
    expect(progressOf(await read())).toEqual({ progress: 3, total: 9, message: 'a third' });
  });

  it('"Progress tokens MUST be a string or integer value": anything else is no token', () => {
    expect(progressTokenOf({ progressToken: 'abc' })).toBe('abc');
    expect(progressTokenOf({ progressToken: 12 })).toBe(12);
    for (const meta of [undefined, {}, { progressToken: 1.5 }, { progressToken: null }, { progressToken: { id: 1 } }]) {
      expect(progressTokenOf(meta)).toBeUndefined();
    }
  });
});
