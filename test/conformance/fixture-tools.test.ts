/**
 * The conformance fixture tools load like any tool folder (schema, ASL validation) and
 * declare what the scenarios require of them, so `npm run conformance` never fails
 * on a fixture that would not even start.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';

describe('conformance fixture tools', () => {
  it('greet and the reference-server tools are sync-only; slow_compute supports tasks; failing_job and protocol_error_job require them', async () => {
    const folders = await loadToolFolders(resolve(import.meta.dirname, 'tools'));
    expect(Object.fromEntries(folders.map((f) => [f.config.name, f.config.invocation]))).toEqual({
      echo: 'sync',
      failing_job: 'async',
      greet: 'sync',
      json_schema_2020_12_tool: 'sync',
      protocol_error_job: 'async',
      slow_compute: 'both',
      test_audio_content: 'sync',
      test_custom_headers: 'sync',
      test_embedded_resource: 'sync',
      test_error_handling: 'sync',
      test_image_content: 'sync',
      test_multiple_content_types: 'sync',
      test_simple_text: 'sync',
    });
    // http-header-validation calls the first tool a 2026-07-28 client without tasks sees, with no arguments.
    const firstListed = folders.map((f) => f.config).filter((c) => c.invocation !== 'async')[0]!;
    expect(firstListed.name).toBe('echo');
    expect(firstListed.inputSchema.required).toBeUndefined();
    // Pure ASL: no worker Lambdas to build or deploy.
    expect(folders.flatMap((f) => f.workers)).toEqual([]);
  });
});
