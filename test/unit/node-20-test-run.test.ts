/**
 * A test run on Node 20 says one line about it, or none on Node 22 and 24 (issue 41: about 100
 * AWS SDK NodeVersionSupportWarning blocks and 5 oidc-provider warnings). The run is a vitest
 * of its own with the project's config over a file that loads both modules, with neither
 * warning switched off in its environment beforehand.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const NOISY = 'test/fixtures/node-version/noisy-imports.test.ts';

describe('a test run on this Node', { timeout: 120_000 }, () => {
  it('prints at most one line about the Node version: on Node 20 what to upgrade and why, on 22 and 24 none', async () => {
    const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _sdk, NODE_NO_WARNINGS: _quiet, ...env } = process.env;
    const output = await new Promise<{ code: number; text: string }>((done) => {
      execFile(
        process.execPath,
        [resolve(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', NOISY],
        { cwd: ROOT, env, timeout: 110_000 },
        (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, text: `${stdout}\n${stderr}` }),
      );
    });
    expect(output.code, output.text).toBe(0);
    expect(output.text).not.toMatch(/NodeVersionSupportWarning|oidc-provider WARNING/);
    const aboutNode = output.text.split('\n').filter((line) => /\bnode(\.js)? ?v?2\d\b|Node\.js \d/i.test(line));
    if (Number(process.versions.node.split('.')[0]) >= 22) expect(aboutNode).toEqual([]);
    else {
      expect(aboutNode).toHaveLength(1);
      expect(aboutNode[0]).toMatch(/^Node\.js 20\.\d+\.\d+ is past its end of life: upgrade to Node 22 or 24/);
    }
  });
});
