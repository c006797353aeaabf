/**
 * One request never outlives its Lambda, on the local stack: a waited-on 2026-07-28
 * `tools/call` whose own inputResponses answer the question its run asks goes on in a nested
 * round, and is still stopped at its one bound, not at a fresh bound after the answer.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

const BOUND_SECONDS = 4;
const ASK_AFTER_SECONDS = 2;

/** Waits, asks to go on, then works far longer than any bound. */
const TOOL = {
  name: 'ask_then_work',
  description: 'Waits, asks whether to go on, then works for a minute.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  invocation: 'sync',
  workflowType: 'STANDARD',
  syncTimeoutSeconds: BOUND_SECONDS,
};
const DEFINITION = {
  StartAt: 'Settle',
  TimeoutSeconds: 600,
  States: {
    Settle: { Type: 'Wait', Seconds: ASK_AFTER_SECONDS, Next: 'AskGoOn' },
    AskGoOn: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: {
        FunctionName: '${Worker_request_input}',
        Payload: {
          'taskToken.$': '$$.Task.Token',
          key: 'go_on',
          request: { method: 'elicitation/create', params: { message: 'Go on?', requestedSchema: { type: 'object', properties: {} } } },
        },
      },
      TimeoutSeconds: 300,
      ResultPath: '$.answer',
      Next: 'Work',
    },
    Work: { Type: 'Wait', Seconds: 60, Next: 'Done' },
    Done: { Type: 'Pass', Parameters: { content: [{ type: 'text', text: 'done' }] }, End: true },
  },
};

let dir: string;
let stack: LocalStack;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'one-request-deadline-'));
  await mkdir(join(dir, TOOL.name));
  await writeFile(join(dir, TOOL.name, 'tool.json'), JSON.stringify(TOOL));
  await writeFile(join(dir, TOOL.name, 'definition.asl.json'), JSON.stringify(DEFINITION));
  stack = await startTestStack({ toolsDir: dir });
});
afterAll(async () => {
  await stack?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('one deadline per request', () => {
  it('a call that answers its run’s question from its own inputResponses is stopped at its bound, not a bound after the answer', async () => {
    const began = Date.now();
    const result = ok(
      await modernRequest(
        stack.url,
        'tools/call',
        { name: TOOL.name, arguments: {}, inputResponses: { go_on: { action: 'accept', content: {} } } },
        { capabilities: { elicitation: {} } },
      ),
    );
    const elapsed = (Date.now() - began) / 1000;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(new RegExp(`did not finish within ${BOUND_SECONDS} seconds`));
    // A fresh bound in the nested round would answer after about 2 + 0.4 + 4 seconds.
    expect(elapsed).toBeGreaterThanOrEqual(BOUND_SECONDS - 0.1);
    expect(elapsed).toBeLessThan(BOUND_SECONDS + ASK_AFTER_SECONDS / 2 + 0.4);
  });
});
