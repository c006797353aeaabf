/**
 * The final write never loses a result to the record's size. A record that waits on large
 * questions and carries many reports ends with a ~60 KB result: its questions go (nobody
 * can answer them now), its reports are trimmed to what a terminal record needs, and a
 * result that still does not fit goes to the results bucket whatever its own size. Run
 * against the in-memory store and against dynalite, which enforce DynamoDB's 400 KB items.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { DynamoDbRecordStore } from '../../lambdas/aws/dynamodb-record-store.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import type { OperationRecord, PendingInput, RunReport } from '../../lambdas/operations/operation.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { createOperationsTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const OWNER = 'owner-terminal';
const tool = testTool({ name: 'big_job', outputSchema: { type: 'object', properties: { data: { type: 'string' } }, required: ['data'] } });

let local: LocalDynamo;
let tables = 0;
beforeAll(async () => {
  local = await startLocalDynamo();
});
afterAll(async () => {
  await local?.close();
});

const stores: Array<[string, () => Promise<RecordStore>]> = [
  ['in-memory', async () => new InMemoryRecordStore()],
  [
    'DynamoDB (dynalite)',
    async () => {
      const tableName = `terminal-${++tables}`;
      await createOperationsTable(local.client, tableName);
      return new DynamoDbRecordStore({ client: local.client, tableName });
    },
  ],
];

function serverFor(store: RecordStore) {
  const engine = new FakeWorkflowEngine();
  const results = new InMemoryResultStore();
  const app = createAsyncMcpApp({
    store,
    engine,
    catalog: createToolCatalog([tool]),
    secretKey: TEST_SECRET_KEY,
    limits: { ...TEST_LIMITS, maxActiveOperations: 1000 },
    logger: { error: () => undefined, warn: () => undefined },
    results: { store: results },
  });
  return { engine, results, operations: app.operations };
}

/** `count` questions, each with a message of `bytes` characters, as the request-input worker stores them. */
function questions(count: number, bytes: number, at: number): Record<string, PendingInput> {
  const question = (i: number): PendingInput => ({
    request: { method: 'elicitation/create', params: { message: `${i}:${'q'.repeat(bytes)}`, requestedSchema: { type: 'object', properties: {} } } },
    taskToken: `task-token-${i}`,
    askedAt: at,
  });
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`question-${i}`, question(i)]));
}

/** `count` log reports of `bytes` characters each, made a minute before the end, and one progress. */
function reports(count: number, bytes: number, at: number): RunReport[] {
  const logs = Array.from({ length: count }, (_, i): RunReport => ({ seq: i + 1, at, kind: 'log', level: 'info', data: `${i}:${'r'.repeat(bytes)}` }));
  return [{ seq: count + 1, at, kind: 'progress', progress: 9, total: 10, message: 'almost' }, ...logs.map((report, i) => ({ ...report, seq: count + 2 + i }))];
}

/** Starts an operation, loads its record with questions and reports, then ends its execution with `output`. */
async function endLoaded(
  server: ReturnType<typeof serverFor>,
  store: RecordStore,
  load: { questions: number; questionBytes: number; reports: number; reportBytes: number },
  output: unknown,
) {
  const token = `loaded-${Math.random().toString(36).slice(2)}`;
  const started = await server.operations.start({
    ownerId: OWNER,
    tool,
    arguments: {},
    token,
    dialect: 'tasks-2025-11-25',
    clientCapabilities: { elicitation: {} },
  });
  const minuteAgo = Date.now() - 60_000;
  const loaded = await store.transition(started, ['working'], {
    status: 'input_required',
    pendingInputs: questions(load.questions, load.questionBytes, minuteAgo),
    reports: reports(load.reports, load.reportBytes, minuteAgo),
    updatedAt: started.updatedAt + 1,
  });
  expect(loaded).toBeDefined();
  const snapshot = server.engine.finish(started.executionArn!, { status: 'SUCCEEDED', output });
  return (await server.operations.applyExecution(started, snapshot)) as OperationRecord;
}

const output = { data: 'x'.repeat(60_000) };

describe.each(stores)('%s', (_name, makeStore) => {
  it('a ~60 KB result ends a record with three 50 KB questions and fifty 4 KB reports as completed, questions cleared, reports trimmed', async () => {
    const store = await makeStore();
    const server = serverFor(store);
    const ended = await endLoaded(server, store, { questions: 3, questionBytes: 50_000, reports: 50, reportBytes: 4_000 }, output);
    expect(ended.status).toBe('completed');
    expect(ended.pendingInputs).toBeUndefined();
    // The latest progress stays for status answers; the old log lines go.
    expect(ended.reports).toEqual([expect.objectContaining({ kind: 'progress', progress: 9 })]);
    const read = await server.operations.readLive(ended);
    expect(read.status).toBe('completed');
    expect(JSON.stringify(read.outcome)).toContain(output.data);
  });
});

describe('a record that would still be too large', () => {
  it('spills the result to the bucket, though it is under the spill threshold, instead of failing it', async () => {
    // An item limit of 100 KB: the 60 KB output, shaped as text plus structuredContent, is twice that.
    const store = new InMemoryRecordStore({ maxRecordBytes: 100 * 1024 });
    const server = serverFor(store);
    const ended = await endLoaded(server, store, { questions: 0, questionBytes: 0, reports: 30, reportBytes: 1_500 }, output);
    expect(ended.status).toBe('completed');
    expect(server.results.objects.size).toBe(1);
    const [stored] = [...server.results.objects.values()];
    expect(JSON.parse(Buffer.from(stored!.body).toString('utf8'))).toEqual(output);
    expect(JSON.stringify(ended.outcome)).toContain('resource_link');
  });
});
