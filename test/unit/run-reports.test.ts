/** Progress and log lines a run reports: numbered on the record, bounded, and never failing a run for a finished operation. */
import { describe, expect, it, vi } from 'vitest';
import { latestProgress, logLevelPasses, MAX_KEPT_REPORTS, ReportRefused, reportsAfter } from '../../lambdas/operations/run-reports.ts';
import { coreHarness } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

async function started() {
  const h = coreHarness();
  const record = await h.service.start({ ownerId: 'o1', tool: testTool({ name: 'job' }), arguments: {}, token: 't1', dialect: 'sep-1391' });
  return { ...h, record };
}

describe('run reports', () => {
  it('a progress report is numbered, kept on the record and becomes the status message', async () => {
    const { service, record } = await started();
    await service.reports.report({ operation: record, executionName: record.executionName, report: { progress: 5, total: 10, message: 'half way' } });
    const current = await service.readCurrent(record);
    expect(latestProgress(current)).toMatchObject({ seq: 1, progress: 5, total: 10, message: 'half way' });
    expect(current.statusMessage).toBe('half way');
  });

  it('log lines and progress share one sequence, so a waiting call sends each exactly once', async () => {
    const { service, record } = await started();
    const report = (r: unknown) => service.reports.report({ operation: record, executionName: record.executionName, report: r });
    await report({ level: 'info', data: 'started' });
    await report({ progress: 1 });
    await report({ level: 'debug', logger: 'db', data: { rows: 3 } });
    const current = await service.readCurrent(record);
    expect(reportsAfter(current, 1).map((r) => [r.seq, r.kind])).toEqual([
      [2, 'progress'],
      [3, 'log'],
    ]);
  });

  it('reports made at once (a Parallel state) are all kept', async () => {
    const { service, record } = await started();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => service.reports.report({ operation: record, executionName: record.executionName, report: { progress: i } })),
    );
    expect((await service.readCurrent(record)).reports!.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it(`keeps the last ${MAX_KEPT_REPORTS} reports`, async () => {
    const { service, record } = await started();
    for (let i = 0; i < MAX_KEPT_REPORTS + 5; i++)
      await service.reports.report({ operation: record, executionName: record.executionName, report: { progress: i } });
    const reports = (await service.readCurrent(record)).reports!;
    expect(reports).toHaveLength(MAX_KEPT_REPORTS);
    expect(reports[0]!.seq).toBe(6);
  });

  it('a report for a finished operation, or from another execution, is dropped without failing the run', async () => {
    const { service, record } = await started();
    expect(await service.reports.report({ operation: record, executionName: 'op-other', report: { progress: 1 } })).toEqual({ written: false });
    await service.cancel(record);
    expect(await service.reports.report({ operation: record, executionName: record.executionName, report: { progress: 1 } })).toEqual({ written: false });
  });

  it('a malformed report is refused naming the field', async () => {
    const { service, record } = await started();
    for (const bad of [{ progress: -1 }, { progress: 'x' }, { level: 'loud', data: 1 }, { level: 'info' }, { progress: 1, extra: true }]) {
      const error = await service.reports.report({ operation: record, executionName: record.executionName, report: bad }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReportRefused);
    }
  });

  it('log levels pass at or above the threshold', () => {
    expect(logLevelPasses('info', 'debug')).toBe(true);
    expect(logLevelPasses('info', 'info')).toBe(true);
    expect(logLevelPasses('info', 'warning')).toBe(false);
  });
});

describe('run reports from parallel branches', () => {
  it('increments add up, and progress never goes backwards', async () => {
    const { service, record } = await started();
    const report = (r: unknown) => service.reports.report({ operation: record, executionName: record.executionName, report: r });
    await Promise.all([report({ increment: 1, total: 3 }), report({ increment: 1, total: 3 }), report({ increment: 1, total: 3 })]);
    expect(latestProgress(await service.readCurrent(record))?.progress).toBe(3);
    await report({ progress: 1 });
    expect(latestProgress(await service.readCurrent(record))?.progress).toBe(3);
  });
});

describe('a waiting call sees the reports', () => {
  it('every record a sync round reads goes to onRecord, so reports made while it waits reach the caller', async () => {
    const { service, engine } = coreHarness();
    const tool = testTool({ name: 'job', invocation: 'both', timing: { ...testTool({ name: 'x' }).timing, syncTimeoutSeconds: 60 } });
    const seen: number[] = [];
    const round = service.runSyncStep({
      ownerId: 'o1',
      tool,
      arguments: {},
      dialect: 'sync',
      atBound: 'stop',
      onQuestion: 'wait',
      onRecord: async (record) => {
        seen.push(record.reports?.length ?? 0);
      },
    });
    const record = await vi.waitFor(async () => {
      const [started] = (await service.list('o1', { limit: 1 })).items;
      expect(started).toBeDefined();
      return started!;
    });
    await service.reports.report({ operation: record, executionName: record.executionName, report: { progress: 1 } });
    await vi.waitFor(() => expect(seen).toContain(1));
    await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { ok: true } }));
    expect((await round).kind).toBe('finished');
  });
});
