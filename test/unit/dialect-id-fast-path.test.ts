/**
 * A poll's params (`taskId`, `token`) skip zod on their fast path: what passes it is what the
 * zod schema would give, and everything else gets the schema's own answer and messages.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { withIdFastPath } from '../../lambdas/mcp/dialects/dialect-support.ts';

const TaskIdParams = z.looseObject({ taskId: z.string({ message: 'taskId must be a string' }).min(1, 'taskId must not be empty') });
const fast = withIdFastPath(TaskIdParams, 'taskId');

describe('withIdFastPath', () => {
  it('gives what the zod schema gives, for well-formed and malformed params alike', async () => {
    for (const params of [{ taskId: 't-1' }, { taskId: 't-1', _meta: { a: 1 } }, { taskId: '' }, { taskId: 7 }, {}, { taskid: 'x' }]) {
      const ours = await fast['~standard'].validate(params);
      const zod = await TaskIdParams['~standard'].validate(params);
      expect(ours, JSON.stringify(params)).toEqual(zod);
    }
  });

  it('words a malformed id as the schema does', async () => {
    const result = await fast['~standard'].validate({ taskId: '' });
    expect(result.issues?.map((issue) => issue.message)).toEqual(['taskId must not be empty']);
  });
});
