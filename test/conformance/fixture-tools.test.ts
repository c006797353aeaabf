/**
 * The conformance fixture tools load like any tool folder (schema, ASL validation) and
 * declare what the Tasks scenarios require of them, so `npm run conformance` never fails
 * on a fixture that would not even start.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';

describe('conformance fixture tools', () => {
  it('greet is sync-only; slow_compute supports tasks; failing_job and protocol_error_job require them', async () => {
    const folders = await loadToolFolders(resolve(import.meta.dirname, 'tools'));
    expect(Object.fromEntries(folders.map((f) => [f.config.name, f.config.invocation]))).toEqual({
      failing_job: 'async',
      greet: 'sync',
      protocol_error_job: 'async',
      slow_compute: 'both',
    });
    // Pure ASL: no worker Lambdas to build or deploy.
    expect(folders.flatMap((f) => f.workers)).toEqual([]);
  });
});
