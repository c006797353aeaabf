/** The checks a run report passes before it is written (by hand, so status sync and the workers carry no schema library). */
import { describe, expect, it } from 'vitest';
import { MAX_LOG_DATA_BYTES, ReportRefused } from '../../lambdas/operations/run-reports.ts';
import { coreHarness } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

async function reporter() {
  const h = coreHarness();
  const record = await h.service.start({ ownerId: 'o1', tool: testTool({ name: 'job' }), arguments: {}, token: 't1', dialect: 'sep-1391' });
  return { ...h, record, report: (report: unknown) => h.service.reports.report({ operation: record, executionName: record.executionName, report }) };
}

describe('run report checks', () => {
  it('takes every well-formed shape', async () => {
    const { report, service, record } = await reporter();
    for (const good of [
      { progress: 0 },
      { progress: 2, total: 4, message: 'm' },
      { increment: 1.5 },
      { level: 'warning', data: { a: 1 } },
      { level: 'info', logger: 'db', data: null },
    ]) {
      expect(await report(good), JSON.stringify(good)).toEqual({ written: true });
    }
    expect((await service.readCurrent(record)).reports?.map((r) => r.kind)).toEqual(['progress', 'progress', 'progress', 'log', 'log']);
  });

  it('refuses each malformed one with a reason naming the field, and writes nothing', async () => {
    const { report, service, record } = await reporter();
    const cases: Array<[unknown, RegExp]> = [
      ['half', /must be an object/],
      [{ progress: 'half' }, /progress must be a finite number/],
      [{ progress: -1 }, /progress must be a finite number, 0 or more/],
      [{ increment: 0 }, /increment must be a finite positive number/],
      [{ progress: 1, total: 0 }, /total must be a finite positive number/],
      [{ progress: 1, increment: 1 }, /exactly one of progress and increment/],
      [{ total: 3 }, /exactly one of progress and increment/],
      [{ progress: 1, message: 'x'.repeat(1001) }, /message must be a string of at most 1000/],
      [{ progress: 1, colour: 'red' }, /colour is not a field/],
      [{ level: 'loud', data: 1 }, /level must be one of debug/],
      [{ level: 'info', logger: 'l'.repeat(201), data: 1 }, /logger must be a string of at most 200/],
      [{ level: 'info' }, /data is required/],
      [{ level: 'info', data: 'x'.repeat(MAX_LOG_DATA_BYTES) }, new RegExp(`over ${MAX_LOG_DATA_BYTES} bytes`)],
    ];
    for (const [bad, reason] of cases) {
      const error = await report(bad).catch((caught: unknown) => caught);
      expect(error, JSON.stringify(bad)).toBeInstanceOf(ReportRefused);
      expect((error as Error).message, JSON.stringify(bad)).toMatch(reason);
    }
    expect((await service.readCurrent(record)).reports).toBeUndefined();
  });
});
