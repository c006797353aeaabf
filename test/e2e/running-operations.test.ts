/**
 * "There must be a way to list a tool's running operations", so a tool can be drained before
 * a deploy removes it: `npm run running-operations` reads the operations table of the local
 * stack (its DynamoDB endpoint) and lists the operations of one tool that have not ended,
 * whatever their dialect and principal, without their arguments or results. An operation
 * drops off the list once it ends.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listRunningOperations } from '../../lambdas/aws/running-operations.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyNotification, legacyRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

/** Runs until cancelled: the analysis waits ten minutes before it starts. */
const LONG = { name: 'analyze_dataset', arguments: { rows: 4242, seed: 987654321, delaySeconds: 600 } };

let stack: LocalStack;
let dynamodb: DynamoDBClient;
beforeAll(async () => {
  stack = await startTestStack();
  dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.dynamo.endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});
afterAll(async () => {
  dynamodb?.destroy();
  await stack?.close();
});

const headersOf = () => ({ authorization: `Bearer ${randomUUID()}` });
const running = (tool: string) => listRunningOperations({ client: dynamodb, tableName: stack.dynamo.tableName, tool });

describe("a tool's running operations", () => {
  it('lists every operation of the tool that has not ended, of any dialect and principal, and drops each once it ends', async () => {
    const alice = headersOf();
    const bob = headersOf();
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { ...LONG, operation: { token } }, { headers: alice }));
    const taskId = ok(await legacyRequest(stack.url, 'tools/call', { ...LONG, task: {} }, { headers: bob })).task.taskId as string;
    // A finished operation of the same tool is not running.
    const quick = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 5 }, operation: { token: quick } }, { headers: alice }));
    await expect
      .poll(async () => ok(await legacyRequest(stack.url, 'tools/async/status', { token: quick }, { headers: alice })).status, { timeout: 15_000 })
      .toBe('completed');

    const listed = await running('analyze_dataset');
    expect(listed.map((op) => op.token).sort()).toEqual([token, taskId].sort());
    for (const op of listed) {
      expect(op.status).toBe('working');
      expect(op.executionArn).toMatch(/^arn:aws:states:[^:]+:\d+:execution:[^:]+:.+$/);
      expect(op.createdAt).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(Object.fromEntries(listed.map((op) => [op.token, op.dialect]))).toEqual({ [token]: 'sep-1391', [taskId]: 'tasks-2025-11-25' });
    expect(await running('export_dataset')).toEqual([]);

    await legacyNotification(stack.url, 'notifications/cancelled', { _operation: { token } }, alice);
    expect((await running('analyze_dataset')).map((op) => op.token)).toEqual([taskId]);
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }, { headers: bob }));
    expect(await running('analyze_dataset')).toEqual([]);
  });

  it('npm run running-operations prints token, dialect, status, created time and execution ARN, and never the arguments', async () => {
    const headers = headersOf();
    const token = `tok-${randomUUID()}`;
    ok(await legacyRequest(stack.url, 'tools/call', { ...LONG, operation: { token } }, { headers }));
    try {
      const run = (...extra: string[]) =>
        promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', 'scripts/running-operations.ts', '--tool', 'analyze_dataset', '--endpoint', stack.dynamo.endpoint, ...extra],
          {
            timeout: 60_000,
          },
        );
      const json = JSON.parse((await run('--json')).stdout) as Array<Record<string, unknown>>;
      expect(json).toEqual([
        {
          token,
          dialect: 'sep-1391',
          status: 'working',
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          executionArn: expect.stringMatching(/^arn:aws:states:/),
        },
      ]);
      const { stdout } = await run();
      expect(stdout).toContain(token);
      expect(stdout).toContain('1 running operation of analyze_dataset.');
      for (const secret of ['4242', '987654321']) expect(stdout + JSON.stringify(json)).not.toContain(secret);
    } finally {
      await legacyNotification(stack.url, 'notifications/cancelled', { _operation: { token } }, headers);
    }
  });
});
