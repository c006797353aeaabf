/**
 * `report_progress` is best-effort: a store error while writing a report (DynamoDB throttled
 * or unreachable) is logged and the Task succeeds with its input, so a lost progress line
 * never fails a whole run. A malformed report, a bug in the definition, still fails it.
 */
import { describe, expect, it } from 'vitest';
import { withOperations } from '../../lambdas/workers/built-in-scope.ts';
import { createReportProgressHandler } from '../../lambdas/workers/report-progress-worker.ts';
import { coreHarness, memoryLogger } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

class ThrottlingError extends Error {
  override name = 'ProvisionedThroughputExceededException';
}

async function running() {
  const h = coreHarness();
  const record = await h.service.start({
    ownerId: 'o1',
    tool: testTool({ name: 'job' }),
    arguments: { secret: 'argument-value' },
    token: 't1',
    dialect: 'sep-1391',
  });
  const logger = memoryLogger();
  const handler = createReportProgressHandler(() => h.service, logger);
  const report = (event: Record<string, unknown>) =>
    withOperations(h.service, () => handler({ executionName: record.executionName, operation: { ownerId: record.ownerId, token: record.token }, ...event }));
  return { ...h, record, logger, report };
}

/** Every write and read of the record store fails from now on, as a throttled table does. */
function throttleStore(store: object) {
  for (const method of ['get', 'update', 'transition', 'put']) {
    if (typeof (store as Record<string, unknown>)[method] !== 'function') continue;
    (store as Record<string, unknown>)[method] = async () => {
      throw new ThrottlingError('The level of configured provisioned throughput for the table was exceeded');
    };
  }
}

describe('report_progress when the store fails', () => {
  it('succeeds with its input unchanged, and logs the failure with the execution and error but not the report', async () => {
    const { store, record, logger, report } = await running();
    throttleStore(store);
    await expect(report({ progress: 3, total: 10, message: 'private progress text' })).resolves.toEqual({
      progress: 3,
      total: 10,
      message: 'private progress text',
    });
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        message: 'progress report not written; the run goes on',
        fields: { executionName: record.executionName, error: expect.stringContaining('ProvisionedThroughputExceededException') },
      },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain('private progress text');
  });

  it('a log-line report is best-effort the same way', async () => {
    const { store, report } = await running();
    throttleStore(store);
    await expect(report({ level: 'info', data: 'step 2' })).resolves.toEqual({ level: 'info', data: 'step 2' });
  });

  it('with the store healthy, the report is written as before', async () => {
    const { service, record, logger, report } = await running();
    await report({ progress: 4, total: 8 });
    expect((await service.readCurrent(record)).reports?.at(-1)).toMatchObject({ kind: 'progress', progress: 4, total: 8 });
    expect(logger.lines).toEqual([]);
  });

  it('a malformed report still fails the state with Mcp.InvalidReport: that is a bug in the definition', async () => {
    const { report } = await running();
    await expect(report({ progress: 'half' })).rejects.toMatchObject({ name: 'Mcp.InvalidReport' });
  });
});
