/**
 * `npm start` over a broken tool folder (an invalid tool.json, a worker module missing) is
 * refused once the tools are loaded, and they load before the stack: the start command imports
 * none of the stack's modules (the AWS SDK, the local DynamoDB, the MCP server) until its tools
 * have passed, so a refused start no longer loads them (about 2.5 s of CPU) only to fail.
 */
import { describe, expect, it } from 'vitest';
import { staticImports } from '../support/static-imports.ts';

/** What only a running stack needs, whichever module imports it. */
const STACK_MODULE = /^local\/(local-stack|local-durable-tools|dynamodb\/|s3\/|stepfunctions\/sfn-facade\.ts|durable\/|node-http-server)/;
const STACK_PACKAGE = /^(@aws-sdk\/|@modelcontextprotocol\/server|@hono\/|s3rver|dynalite|jsonata|@aws\/durable-execution-sdk-js)/;

describe('npm start with a broken tool folder', () => {
  it('loads and checks the tools before it imports the stack: the start command imports none of the stack statically', async () => {
    const { modules, packages } = await staticImports('local/start-command.ts');
    expect(modules.has('local/local-tools.ts'), 'the walk follows the static imports to the tool loader').toBe(true);
    expect([...modules].filter((file) => STACK_MODULE.test(file))).toEqual([]);
    expect([...packages].filter((name) => STACK_PACKAGE.test(name))).toEqual([]);
  });

  it('imports the workers and the durable handlers with nothing of the stack', async () => {
    const { modules, packages } = await staticImports('local/local-tools.ts');
    expect(modules.has('local/worker-modules.ts')).toBe(true);
    expect([...modules].filter((file) => STACK_MODULE.test(file))).toEqual([]);
    expect([...packages].filter((name) => STACK_PACKAGE.test(name))).toEqual([]);
  });
});
