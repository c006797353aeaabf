/**
 * `events/poll` on the local stack (dynalite, which cuts a Query at 1 MB as DynamoDB does):
 * six `operation.finished` entries with results of 240 KiB each, the most an entry inlines,
 * all reach a client that polls until `hasMore: false`.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbEventLog } from '../../lambdas/aws/dynamodb-event-log.ts';
import { encodeEventCursor } from '../../lambdas/events/event-cursor.ts';
import { streamOf, timePosition } from '../../lambdas/events/event-log.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

const TOKEN = 'erin-page-cut';
const headers = { authorization: `Bearer ${TOKEN}` };
/** The log's owner for the local stack's principal of a bearer token (local-stack.ts). */
const OWNER = ownerIdFor(`bearer:${createHash('sha256').update(TOKEN).digest('hex')}`);
const LARGE_TEXT = 'x'.repeat(240 * 1024 - 200);

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ waitTimeScale: 0.01 });
});
afterAll(async () => {
  await stack?.close();
});

async function poll(params: Record<string, unknown>) {
  return ok(await modernRequest(stack.url, 'events/poll', params, { headers }));
}

describe('events/poll past a 1 MB page', () => {
  it('six operation.finished events with 240 KiB results each: a client polling until hasMore is false receives all six, and truncated stays false', async () => {
    // A cursor from two minutes ago, and the entries placed a minute ago: all six are settled when the first poll reads them.
    const start = encodeEventCursor(timePosition(Date.now() - 120_000));
    const log = new DynamoDbEventLog({ client: stack.awsClients.dynamodb, tableName: stack.dynamo.tableName, now: () => Date.now() - 60_000 });
    const ids = Array.from({ length: 6 }, (_, i) => `evt_pagecut_${i + 1}`);
    for (const [i, eventId] of ids.entries()) {
      const now = Date.now() - 60_000;
      await log.append({
        ownerId: OWNER,
        eventId,
        name: 'operation.finished',
        stream: streamOf('operation.finished', `op-${i}`),
        at: now,
        loggedAt: now,
        operationId: `op-${i}`,
        tool: 'analyze_dataset',
        data: {
          operationId: `op-${i}`,
          tool: 'analyze_dataset',
          status: 'completed',
          isError: false,
          result: { content: [{ type: 'text', text: LARGE_TEXT }] },
        },
        expiresAt: Math.ceil(now / 1000) + 3600,
      });
    }
    const seen: string[] = [];
    let cursor = start;
    let truncated = false;
    // Poll until hasMore is false, as a client does (bounded: six events need a few polls).
    for (let round = 0; round < 10; round++) {
      const result = await poll({ name: 'operation.finished', cursor });
      seen.push(...result.events.map((e: { eventId: string }) => e.eventId));
      truncated ||= result.truncated;
      cursor = result.cursor;
      if (!result.hasMore) break;
    }
    expect(seen).toEqual(ids);
    expect(truncated).toBe(false);
  });
});
