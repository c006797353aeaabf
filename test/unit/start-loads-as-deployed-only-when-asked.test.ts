/**
 * `npm start` loads the as-deployed runtime (the assembly reader, its CloudFormation resolver,
 * the Lambda sandboxes) only for --cdk-out or --as-deployed: a plain start never runs it, and
 * loading it was a tenth of the start's CPU.
 */
import { describe, expect, it } from 'vitest';
import { staticImports } from '../support/static-imports.ts';

describe('npm start', () => {
  it('imports none of the as-deployed runtime statically: --cdk-out and --as-deployed load it when asked', async () => {
    // What main.ts loads once the flags ask for a start, then what the start command loads for a plain start.
    for (const [entry, reached] of [
      ['local/start-command.ts', 'local/local-tools.ts'],
      ['local/local-stack.ts', 'local/local-durable-tools.ts'],
    ] as const) {
      const { modules, packages } = await staticImports(entry);
      expect(modules.has(reached), `the walk from ${entry} follows the static imports`).toBe(true);
      expect([...modules].filter((file) => /^local\/(as-deployed|assembly|lambda)\//.test(file))).toEqual([]);
      expect([...packages].filter((name) => name.startsWith('cfn-resolver-lib'))).toEqual([]);
    }
  });
});
