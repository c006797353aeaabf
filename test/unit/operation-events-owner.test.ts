/**
 * Issue 27.6: the owner an `Operation Status Changed` event names. Anyone who reads the bus, a
 * rule's target or the failure email sees the event, so nothing in it may let them test a
 * candidate principal (a role ARN, an IdP subject) offline: the owner id is an HMAC under the
 * server key, and the event carries no id derived from the principal without that key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOperationEventsPublisher } from '../../lambdas/aws/operation-events-publisher.ts';
import { createStatusSyncHandler, type ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import { createOperations, DEFAULT_LIMITS, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { METRIC, type MetricsRecorder } from '../../lambdas/observability/metrics-recorder.ts';
import { startPutEventsEndpoint, type EventBridgeEvent, type PutEventsEndpoint } from '../../local/events/put-events-endpoint.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool = testTool({
  name: 'job',
  timing: { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 5, syncTimeoutSeconds: 5, maxRunSeconds: 3600 },
});
const ALICE = 'iam-role:arn:aws:iam::123456789012:role/alice';
const BOB = 'oauth:https://issuer.example|bob';
const KEY = { accessKeyId: 'LOCALTESTKEY', secretAccessKey: 'a-secret-for-this-run-only' };
const SERVER_KEY = randomBytes(32);

let endpoint: PutEventsEndpoint;
let client: EventBridgeClient;
const delivered: EventBridgeEvent[] = [];
const errors: Array<Record<string, unknown>> = [];
const counted: string[] = [];
const metrics: MetricsRecorder = { count: (name) => void counted.push(name), milliseconds: () => undefined, flush: () => undefined };
const logger = { error: (_m: string, fields: Record<string, unknown>) => void errors.push(fields), warn: () => undefined };
let operations: OperationsService;
let engine: FakeWorkflowEngine;
let store: InMemoryRecordStore;

beforeAll(async () => {
  endpoint = await startPutEventsEndpoint({ region: 'us-east-1', accountId: '000000000000', credentials: KEY, onEvent: (event) => void delivered.push(event) });
  client = new EventBridgeClient({ region: 'us-east-1', endpoint: endpoint.endpoint, credentials: KEY });
});
afterAll(async () => {
  client.destroy();
  await endpoint.close();
});
beforeEach(() => {
  delivered.length = 0;
  errors.length = 0;
  counted.length = 0;
  store = new InMemoryRecordStore();
  engine = new FakeWorkflowEngine();
  operations = createOperations({ store, engine, limits: DEFAULT_LIMITS, input: mcpInputProtocol });
});

function syncWith(serverKey: () => Promise<Uint8Array>) {
  return createStatusSyncHandler(
    operations,
    engine,
    logger,
    metrics,
    createOperationEventsPublisher({ client, eventBusName: 'default', logger, metrics, serverKey }),
  );
}

/** Starts an operation of `principal` and reports it completed through `sync`; the record and its event. */
async function completed(sync: ReturnType<typeof syncWith>, principal: string, token: string): Promise<{ record: OperationRecord; event: EventBridgeEvent }> {
  const record = await operations.start({ ownerId: ownerIdFor(principal), tool, arguments: {}, token, dialect: 'tasks-2026-07-28' });
  const input = engine.executions.get(record.executionArn!)!.input;
  const statusEvent: ExecutionStatusChangeEvent = {
    id: `evt-${token}`,
    detail: {
      executionArn: record.executionArn!,
      status: 'SUCCEEDED',
      startDate: record.createdAt,
      stopDate: Date.now(),
      input: JSON.stringify(input),
      inputDetails: { included: true },
      output: '{}',
    },
  };
  const before = delivered.length;
  await sync(statusEvent);
  expect(delivered.length).toBe(before + 1);
  return { record, event: delivered.at(-1)! };
}

const ownerOf = (event: EventBridgeEvent) => (event.detail as { ownerId: string }).ownerId;

describe('the owner id of operation events', () => {
  it("an event's owner field is not the unkeyed hash of its principal, and is stable for one principal", async () => {
    const sync = syncWith(async () => SERVER_KEY);
    const first = ownerOf((await completed(sync, ALICE, 'a-1')).event);
    const second = ownerOf((await completed(sync, ALICE, 'a-2')).event);
    const bob = ownerOf((await completed(sync, BOB, 'b-1')).event);

    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(second).toBe(first);
    expect(bob).not.toBe(first);
    // Neither the operations table's hash of the principal nor a plain hash of it.
    expect(first).not.toBe(ownerIdFor(ALICE));
    for (const unkeyed of [createHash('sha256').update(ALICE).digest('hex'), createHash('sha256').update(`principal\n${ALICE}`).digest('hex')]) {
      expect(unkeyed.startsWith(first)).toBe(false);
    }
    // Keyed: another server key names the same principal otherwise.
    const other = ownerOf(
      (
        await completed(
          syncWith(async () => randomBytes(32)),
          ALICE,
          'a-3',
        )
      ).event,
    );
    expect(other).not.toBe(first);
    expect(errors).toEqual([]);
  });

  it('no other field lets a reader test a candidate principal: neither the table owner hash nor an execution name derived from it', async () => {
    const { record, event } = await completed(
      syncWith(async () => SERVER_KEY),
      ALICE,
      'a-1',
    );
    const text = JSON.stringify(event);
    expect(text).not.toContain(ownerIdFor(ALICE));
    expect(text).not.toContain(record.executionName);
    // The machine the operation ran on is still named.
    expect(event.resources).toEqual([tool.stateMachineArn]);
  });

  it('a server key that cannot be read: no event, logged and counted, and the status is still written', async () => {
    const sync = syncWith(async () => {
      throw new Error('AccessDeniedException: not authorized to perform secretsmanager:GetSecretValue');
    });
    const record = await operations.start({ ownerId: ownerIdFor(ALICE), tool, arguments: {}, token: 'a-1', dialect: 'sep-1391' });
    const input = engine.executions.get(record.executionArn!)!.input;
    await sync({
      detail: {
        executionArn: record.executionArn!,
        status: 'SUCCEEDED',
        stopDate: Date.now(),
        input: JSON.stringify(input),
        inputDetails: { included: true },
        output: '{}',
      },
    });
    expect((await store.get(record))?.status).toBe('completed');
    expect(delivered).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ status: 'completed', error: expect.stringContaining('server key') })]);
    expect(counted).toEqual([METRIC.operationEventsFailed]);
  });
});
