/**
 * A DynamoDB Query stops at 1 MB with a LastEvaluatedKey however few items it read: an
 * `operation.finished` entry may inline a result of up to 240 KiB, so a handful of them
 * fill a page. A read must go on past such a cut, on dynalite, which cuts pages as DynamoDB does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbEventLog } from '../../lambdas/aws/dynamodb-event-log.ts';
import { timePosition } from '../../lambdas/events/event-log.ts';
import { readEvents } from '../../lambdas/events/event-reader.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { entry } from './event-log-contract.ts';

const T0 = 1_760_000_000_000;
const LARGE_RESULT = 'x'.repeat(240 * 1024);
const settings = { retentionMs: 24 * 3_600_000, settleMs: 1000 };

let local: LocalDynamo;

beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

/** A log on a fresh table holding six entries of ~240 KiB each, appended a millisecond apart. */
async function logOfSixLargeEntries(): Promise<DynamoDbEventLog> {
  const tableName = `page-cut-${Math.random().toString(36).slice(2)}`;
  await createOperationsTable(local.client, tableName);
  let now = T0;
  const log = new DynamoDbEventLog({ client: local.client, tableName, now: () => now });
  for (let i = 1; i <= 6; i++) {
    now = T0 + i;
    await log.append(entry({ eventId: `evt_${i}`, operationId: `op-${i}`, at: T0 + i, loggedAt: T0 + i, data: { status: 'completed', result: LARGE_RESULT } }));
  }
  now = T0 + 60_000;
  return log;
}

describe('a read past a 1 MB page cut', () => {
  it('six operation.finished entries of 240 KiB each: a poller reading until hasMore is false gets all six, and truncated stays false', async () => {
    const log = await logOfSixLargeEntries();
    const seen: string[] = [];
    let cursor = timePosition(T0);
    let truncated = false;
    // Bounded: six entries need at most a few reads.
    for (let round = 0; round < 10; round++) {
      const read = await readEvents(log, { ownerId: 'owner-a', name: 'operation.finished', match: () => true, cursor, maxEvents: 50 }, settings, T0 + 60_000);
      seen.push(...read.entries.map((e) => e.eventId));
      truncated ||= read.truncated;
      cursor = read.position;
      if (!read.hasMore) break;
    }
    expect(seen).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5', 'evt_6']);
    expect(truncated).toBe(false);
  });

  it('a page cut short by size says more may follow and names the last entry it returned', async () => {
    const log = await logOfSixLargeEntries();
    const range = { after: timePosition(T0), through: timePosition(T0 + 30_000), limit: 50 };
    const first = await log.read('owner-a', 'operation.finished', range);
    expect(first.entries.length).toBeLessThan(6);
    expect(first.more).toBe(true);
    expect(first.reached).toBe(`${timePosition(T0 + first.entries.length)}evt_${first.entries.length}`);
    const rest = await log.read('owner-a', 'operation.finished', { ...range, after: first.reached });
    expect([...first.entries, ...rest.entries].map((e) => e.eventId)).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5', 'evt_6']);
    expect(rest.more).toBe(false);
  });
});
