/**
 * The house rule "event logic reaches AWS only through ports wired in handlers": no module of
 * the Events logic imports the AWS SDK, an AWS adapter or a handler's environment; the delivery
 * function's handler builds them and passes them in (issue 47).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';

const EVENTS_DIR = join(REPO_ROOT, 'lambdas/events');

describe('the Events logic and AWS', () => {
  it('no module under lambdas/events imports @aws-sdk, lambdas/aws or lambdas/handlers', async () => {
    const files = (await readdir(EVENTS_DIR, { recursive: true })).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('webhook-job-runner.ts');
    const offending: string[] = [];
    for (const file of files) {
      const text = await readFile(join(EVENTS_DIR, file), 'utf8');
      for (const [, from] of text.matchAll(/\bfrom\s+'([^']+)'/g)) {
        if (from?.startsWith('@aws-sdk/') || /(^|\/)(aws|handlers)\//.test(from ?? ''))
          offending.push(`${relative(REPO_ROOT, join(EVENTS_DIR, file))}: ${from}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
