/**
 * An entry's position is its place in the log, and readers stop a settled horizon behind now
 * and never look back: a write that lands behind that horizon is never read by a cursor that
 * has passed it. The PutItem here is held up by a fault-injecting request handler (the SDK's
 * own, wrapped) while the clock moves past the horizon and the poller reads; on dynalite.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { HttpHandler, HttpRequest } from '@smithy/protocol-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { DynamoDbEventLog } from '../../lambdas/aws/dynamodb-event-log.ts';
import { EVENTS_DEFAULTS } from '../../lambdas/events/events-settings.ts';
import { readEvents } from '../../lambdas/events/event-reader.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { entry } from './event-log-contract.ts';

const T0 = 1_760_000_000_000;
const settings = { retentionMs: 24 * 3_600_000, settleMs: EVENTS_DEFAULTS.settleMs };
/** How long the held attempt takes on the log's clock: well past the horizon. */
const SLOW_MS = EVENTS_DEFAULTS.settleMs + 5_000;

let local: LocalDynamo;

beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

type Handle = (request: HttpRequest, options?: { abortSignal?: AbortSignal }) => ReturnType<HttpHandler['handle']>;

/**
 * A client whose first PutItem is slow: `whileHeld` runs while it is in flight, then it goes
 * on to dynalite, unless the caller gave it up meanwhile (its abort signal), as a hung
 * connection would be given up.
 */
function clientWithSlowFirstPut(whileHeld: () => Promise<void>): DynamoDBClient {
  const plain = new DynamoDBClient({
    ...AWS_CLIENT_CONFIG,
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const inner = plain.config.requestHandler as unknown as HttpHandler & { handle: Handle };
  let held = false;
  const handle: Handle = async (request, options) => {
    if (!held && request.headers['x-amz-target']?.endsWith('.PutItem')) {
      held = true;
      await whileHeld();
      const signal = options?.abortSignal;
      if (signal) await new Promise((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener('abort', resolve, { once: true })));
    }
    return inner.handle(request, options);
  };
  return new DynamoDBClient({
    ...AWS_CLIENT_CONFIG,
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { handle, updateHttpClientConfig: () => {}, httpHandlerConfigs: () => ({}), destroy: () => plain.destroy() } as unknown as HttpHandler,
  });
}

describe('an append slower than the readers’ horizon', () => {
  it('a PutItem held in flight while the clock passes the horizon still reaches a poller following its cursor', async () => {
    const tableName = `late-${Math.random().toString(36).slice(2)}`;
    await createOperationsTable(local.client, tableName);
    let now = T0;
    const read = { ownerId: 'owner-a', name: 'operation.finished', match: () => true, maxEvents: 50 };
    const first = await readEvents({} as never, { ...read, cursor: null }, settings, now);
    let cursor = first.position;
    const seen: string[] = [];
    let log: DynamoDbEventLog | undefined;
    const follow = async () => {
      const page = await readEvents(log as DynamoDbEventLog, { ...read, cursor }, settings, now);
      seen.push(...page.entries.map((e) => e.eventId));
      cursor = page.position;
    };
    const client = clientWithSlowFirstPut(async () => {
      // The attempt is still in flight when the clock is past the horizon and the poller reads on.
      now += SLOW_MS;
      await follow();
    });
    // A short bound on one attempt, so the held one is given up at once.
    log = new DynamoDbEventLog({ client, tableName, now: () => now, attemptTimeoutMs: 50 });
    const appended = await log.append(entry({ eventId: 'evt_late', at: T0, loggedAt: T0 }));
    expect(appended.created).toBe(true);
    now += settings.settleMs + 1;
    await follow();
    expect(seen).toEqual(['evt_late']);
    client.destroy();
  });
});
