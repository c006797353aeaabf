/**
 * Issue 10, "Results of any size", in the core and at the edge: an output whose JSON is
 * larger than the spill threshold goes to the results store and the record keeps only
 * its location; the tool result is a resource_link; only the owner reads it back, and
 * only while the operation lives.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { DEFAULT_SPILL_THRESHOLD_BYTES, parseResultUri, resultKeyFor, RESULT_URI_PREFIX } from '../../lambdas/operations/result-store.ts';
import { toCallToolResult } from '../../lambdas/mcp/results/tool-result.ts';
import { withResultStore, writeResult } from '../../lambdas/results/write-result.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { ManualClock, memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool = testTool({ name: 'big' });
const owner = 'owner-a';
const stranger = 'owner-b';

function harness() {
  const results = new InMemoryResultStore();
  const engine = new FakeWorkflowEngine();
  const clock = new ManualClock();
  const service = createOperations({
    store: new InMemoryRecordStore(),
    engine,
    limits: TEST_LIMITS,
    clock,
    logger: memoryLogger(),
    results: { store: results },
    input: mcpInputProtocol,
  });
  return { results, engine, clock, service };
}

/** An output whose JSON (`{"data":"xx…"}`) is exactly `bytes` UTF-8 bytes long. */
function outputOfBytes(bytes: number) {
  const output = { data: 'x'.repeat(bytes - '{"data":""}'.length) };
  expect(Buffer.byteLength(JSON.stringify(output))).toBe(bytes);
  return output;
}

async function finishWith(h: ReturnType<typeof harness>, token: string, output: unknown) {
  const started = await h.service.start({ ownerId: owner, tool, arguments: {}, token, dialect: 'sep-1391' });
  const snapshot = h.engine.finish(started.executionArn!, { status: 'SUCCEEDED', output, stopDate: new Date(h.clock.ms) });
  return (await h.service.applyExecution({ ownerId: owner, token }, snapshot))!;
}

describe('the spill threshold (outputs whose JSON is more than DEFAULT_SPILL_THRESHOLD_BYTES UTF-8 bytes are stored)', () => {
  it('an output of threshold - 1 bytes stays in the record', async () => {
    const h = harness();
    const record = await finishWith(h, 'below', outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES - 1));
    expect(record.outcome?.kind).toBe('result');
    expect(h.results.objects.size).toBe(0);
  });

  it('an output of exactly the threshold stays in the record', async () => {
    const h = harness();
    const output = outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES);
    const record = await finishWith(h, 'at', output);
    expect(record.outcome).toEqual({ kind: 'result', output });
    expect(h.results.objects.size).toBe(0);
  });

  it('an output of threshold + 1 bytes is stored, and the record keeps only its id, type and size', async () => {
    const h = harness();
    const output = outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1);
    const record = await finishWith(h, 'above', output);
    expect(record.outcome).toMatchObject({ kind: 'stored-result', mimeType: 'application/json', bytes: DEFAULT_SPILL_THRESHOLD_BYTES + 1 });
    const [key, stored] = [...h.results.objects][0]!;
    expect(key).toBe(resultKeyFor(owner, (record.outcome as { resultId: string }).resultId));
    expect(JSON.parse(Buffer.from(stored!.body).toString('utf8'))).toEqual(output);
  });

  it('a stored output becomes a CallToolResult with one resource_link of our scheme, its mimeType and size', async () => {
    const h = harness();
    const record = await finishWith(h, 'link', outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1));
    const result = toCallToolResult(record.outcome!, tool);
    expect(result.content).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'application/json', size: DEFAULT_SPILL_THRESHOLD_BYTES + 1 })]);
    expect(String((result.content[0] as { uri: string }).uri).startsWith(RESULT_URI_PREFIX)).toBe(true);
  });
});

describe('reading a stored result', () => {
  async function storedUri(h: ReturnType<typeof harness>) {
    const record = await finishWith(h, 'read-me', outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1));
    return String((toCallToolResult(record.outcome!, tool).content[0] as { uri: string }).uri);
  }

  it('the owner reads back exactly the stored bytes', async () => {
    const h = harness();
    const uri = await storedUri(h);
    const read = await h.service.readResult(owner, uri);
    expect(read?.contentType).toBe('application/json');
    expect(JSON.parse(Buffer.from(read!.body).toString('utf8'))).toEqual(outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1));
  });

  it('another principal reads nothing, exactly as for an unknown URI', async () => {
    const h = harness();
    const uri = await storedUri(h);
    expect(await h.service.readResult(stranger, uri)).toBeUndefined();
    expect(await h.service.readResult(owner, `${RESULT_URI_PREFIX}cmVhZC1tZQ.AAAAAAAAAAAAAAAAAAAAAA`)).toBeUndefined();
    expect(await h.service.readResult(owner, 'async-mcp://results/not-an-id')).toBeUndefined();
    expect(await h.service.readResult(owner, 'file:///etc/passwd')).toBeUndefined();
  });

  it('the result lives as long as the operation: after its keepAlive it reads as absent', async () => {
    const h = harness();
    const uri = await storedUri(h);
    h.clock.advance(tool.timing.keepAliveSeconds - 1);
    expect(await h.service.readResult(owner, uri)).toBeDefined();
    h.clock.advance(2);
    expect(await h.service.readResult(owner, uri)).toBeUndefined();
  });
});

describe('writeResult (the helper workers use for large results)', () => {
  it('stores the bytes under the operation owner and returns a resource_link only that owner can read', async () => {
    const h = harness();
    await h.service.start({ ownerId: owner, tool, arguments: {}, token: 'worker-op', dialect: 'sep-1391' });
    const csv = 'index,value\n0,1\n';
    const result = await withResultStore(h.results, () => writeResult({ ownerId: owner, token: 'worker-op' }, csv, { mimeType: 'text/csv', name: 'data.csv' }));
    expect(result.content).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'text/csv', name: 'data.csv', size: csv.length })]);
    const uri = result.content[0]!.uri;
    expect(parseResultUri(uri)?.token).toBe('worker-op');
    expect(Buffer.from((await h.service.readResult(owner, uri))!.body).toString('utf8')).toBe(csv);
    expect(await h.service.readResult(stranger, uri)).toBeUndefined();
  });
});
