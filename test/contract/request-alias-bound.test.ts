/**
 * Request aliases from SEP-1391 retries under new JSON-RPC ids never grow the principal's
 * slot item: the operation keeps its newest few ids. On dynalite, with the longest ids the
 * server accepts: without the bound, each retry adds a kilobyte, and about 400 of them pass
 * DynamoDB's 400 KB item limit, after which every start of the principal is refused.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { itemBytes } from '../../lambdas/aws/operation-item.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { MAX_ID_BYTES, MAX_REQUEST_ALIASES_PER_OPERATION } from '../../lambdas/operations/ports.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

let local: LocalDynamo;
beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

const tool = testTool({ name: 'analyze' });
const RETRIES = 40;
/** A request id of MAX_ID_BYTES: the edge types ids, so any prefix will do. */
const requestId = (n: number) => `s:${n}-`.padEnd(MAX_ID_BYTES, 'x');

describe('request aliases of one operation', () => {
  it(`a SEP-1391 call retried under ${RETRIES} new ids of ${MAX_ID_BYTES} bytes keeps its slot item small, and a cancel by the newest id still finds it`, async () => {
    const tableName = 'alias-bound';
    await createOperationsTable(local.client, tableName);
    const store = new DynamoDbRecordStore({ client: local.client, tableName });
    const service = createOperations({ store, engine: new FakeWorkflowEngine(), limits: TEST_LIMITS, logger: memoryLogger(), input: mcpInputProtocol });
    const call = { ownerId: 'owner-a', tool, arguments: { rows: 1 }, token: 'client-token', dialect: 'sep-1391' as const };
    for (let n = 0; n < RETRIES; n++) expect((await service.start({ ...call, requestId: requestId(n) })).status).toBe('working');

    const slots = await local.client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'ACTIVE#owner-a' } }, ConsistentRead: true }));
    const aliases = Object.keys(slots.Item ?? {}).filter((name) => name.startsWith('alias#'));
    expect(aliases).toHaveLength(MAX_REQUEST_ALIASES_PER_OPERATION);
    expect(itemBytes(slots.Item!)).toBeLessThan(16 * 1024);
    expect(await service.findByRequestId('owner-a', requestId(RETRIES - 1))).toEqual({ ownerId: 'owner-a', token: 'client-token' });
    expect(await service.findByRequestId('owner-a', requestId(0))).toBeUndefined();
  }, 60_000);
});
