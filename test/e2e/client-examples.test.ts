/** The client programs in examples/, which README.md and docs/clients.md show, run as a user would against the local stack. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const run = promisify(execFile);
let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe.each(['tasks-client.ts', 'legacy-tasks-client.ts', 'sep-1391-client.ts'])('examples/%s', (example) => {
  it('runs analyze_dataset asynchronously to its statistics', async () => {
    const { stdout } = await run(join('node_modules', '.bin', 'tsx'), [join('examples', example), stack.url.href], { timeout: 60_000 });
    const last = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(last.structuredContent).toMatchObject({ count: 200000, mean: expect.any(Number), stddev: expect.any(Number) });
  });
});
