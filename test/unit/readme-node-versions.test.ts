/**
 * The README tells a newcomer which Node to run (issue 28): Node 22 or 24 recommended, the
 * functions' runtime named as the CDK app deploys it, and the oldest Node that still runs as
 * package.json's engines field says, with when the AWS SDK drops it.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_RUNTIME } from '../../cdk/bundled-function.ts';
import { page } from '../support/markdown-blocks.ts';

const readme = page('README.md').replace(/\s+/g, ' ');
const engines = (JSON.parse(readFileSync(join(resolve(import.meta.dirname, '../..'), 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

describe("the README's Node sentence", () => {
  it("recommends Node 22 or 24 and names the functions' runtime", () => {
    expect(readme).toContain(`Node 22 or 24 recommended (the functions run on \`${FUNCTION_RUNTIME.name}\`)`);
  });

  it('names the oldest Node that still runs as the engines field does, and until when', () => {
    // The first range is the oldest: `^20.19.0 || ^22.12.0 || >=24` names 20.19.
    const oldest = /^(?:>=|\^)?\s*(\d+\.\d+)/.exec(engines.split('||')[0]?.trim() ?? '')?.[1];
    expect(oldest, engines).toBeDefined();
    expect(readme).toContain(`Node ${oldest}+ still runs until the AWS SDK drops it in January 2027`);
  });

  it('no longer says "Runs on Node.js 20.19+ and 22"', () => {
    expect(readme).not.toMatch(/Runs on Node\.js/);
  });
});
