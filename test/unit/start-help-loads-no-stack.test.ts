/**
 * `npm start --help` and a mistyped flag are answered from the command line alone: the entry
 * imports none of the stack (the AWS SDK, the local DynamoDB, the MCP server, the tool loader),
 * whose loading was most of the CPU such a start spent before it printed the usage.
 */
import { describe, expect, it } from 'vitest';
import { staticImports } from '../support/static-imports.ts';

describe('npm start --help', () => {
  it('loads the command line only: the stack is imported once the flags are read and ask for a start', async () => {
    const { modules, packages } = await staticImports('local/main.ts');
    expect(modules.has('local/start-usage.ts'), 'the walk follows the static imports').toBe(true);
    expect(
      [...modules].filter((file) => !/^(local\/(main|start-usage|start-defaults)|client\/(command-as-started|cli-command|help-paths))\.ts$/.test(file)),
    ).toEqual([]);
    expect([...packages].filter((name) => !name.startsWith('node:'))).toEqual([]);
  });
});
