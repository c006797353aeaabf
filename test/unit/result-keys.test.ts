/**
 * Keys that fit: a result's object key is a fixed-length hash of its owner and its id
 * (which carries the token), under a prefix per writer, so any token the server accepts
 * fits S3's 1,024-byte keys. Results written under the older keys, which embedded the
 * token, stay readable: their ids have no writer part, and keep their key.
 */
import { describe, expect, it } from 'vitest';
import { mintId } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import { MAX_ID_BYTES } from '../../lambdas/operations/ports.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { parseResultUri, RESULT_KEY_PREFIXES, resultIdFor, resultKeyFor, resultUriFor } from '../../lambdas/operations/result-store.ts';
import { withResultStore, writeResult } from '../../lambdas/results/write-result.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { ManualClock, memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const owner = 'f571ef586b49674deeaca610966547b0';
const tool = testTool({ name: 'big' });

describe('result keys', () => {
  it('are one length whatever the token: 256 CJK characters or the longest token accepted fit in far less than 1,024 bytes', () => {
    const tokens = ['t', '長'.repeat(256), '𝄞'.repeat(MAX_ID_BYTES / 4), 'k'.repeat(MAX_ID_BYTES)];
    const keys = tokens.map((token) => resultKeyFor(owner, resultIdFor(token, mintId(), 'server')));
    expect(new Set(keys.map((key) => Buffer.byteLength(key))).size).toBe(1);
    expect(Buffer.byteLength(keys[0]!)).toBeLessThan(100);
  });

  it("name neither the token nor the owner, and differ by owner: one owner's id never leads to another's object", () => {
    const resultId = resultIdFor('secret-token', mintId(), 'worker');
    const key = resultKeyFor(owner, resultId);
    expect(key).not.toContain(owner);
    expect(key).not.toContain(Buffer.from('secret-token').toString('base64url'));
    expect(resultKeyFor('another-owner', resultId)).not.toBe(key);
    expect(resultKeyFor(owner, resultId)).toBe(key);
  });

  it("sit under their writer's prefix: spilled by the server at completion, or written by a worker during the run", () => {
    expect(resultKeyFor(owner, resultIdFor('t', mintId(), 'server')).startsWith(RESULT_KEY_PREFIXES.server)).toBe(true);
    expect(resultKeyFor(owner, resultIdFor('t', mintId(), 'worker')).startsWith(RESULT_KEY_PREFIXES.worker)).toBe(true);
    expect(RESULT_KEY_PREFIXES.server.startsWith('results/') && RESULT_KEY_PREFIXES.worker.startsWith('results/')).toBe(true);
  });

  it('a result id still names its token, whatever the writer', () => {
    const token = '長'.repeat(256);
    expect(parseResultUri(resultUriFor(resultIdFor(token, mintId(), 'server')))?.token).toBe(token);
    expect(parseResultUri(resultUriFor(resultIdFor(token, mintId(), 'worker')))?.token).toBe(token);
  });
});

describe('results written under the older keys', () => {
  it('keep their key (owner and id in the key), so an existing resource_link reads as before', async () => {
    const results = new InMemoryResultStore();
    const engine = new FakeWorkflowEngine();
    const service = createOperations({
      store: new InMemoryRecordStore(),
      engine,
      limits: TEST_LIMITS,
      clock: new ManualClock(),
      logger: memoryLogger(),
      results: { store: results },
      input: mcpInputProtocol,
    });
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'old-op', dialect: 'sep-1391' });
    // The id and key a worker wrote before keys were hashed.
    const legacyId = `${Buffer.from('old-op').toString('base64url')}.${mintId()}`;
    expect(resultKeyFor(owner, legacyId)).toBe(`results/${owner}/${legacyId}`);
    await results.put(`results/${owner}/${legacyId}`, { body: new TextEncoder().encode('from before'), contentType: 'text/plain' });
    const read = await service.readResult(owner, resultUriFor(legacyId));
    expect(Buffer.from(read!.body).toString('utf8')).toBe('from before');
    expect(await service.readResult('another-owner', resultUriFor(legacyId))).toBeUndefined();
  });

  it('a worker writing now stores under the hashed key, and the link reads back', async () => {
    const results = new InMemoryResultStore();
    const service = createOperations({
      store: new InMemoryRecordStore(),
      engine: new FakeWorkflowEngine(),
      limits: TEST_LIMITS,
      clock: new ManualClock(),
      logger: memoryLogger(),
      results: { store: results },
      input: mcpInputProtocol,
    });
    const token = '長'.repeat(256);
    await service.start({ ownerId: owner, tool, arguments: {}, token, dialect: 'sep-1391' });
    const link = await withResultStore(results, () => writeResult({ ownerId: owner, token }, 'rows', { mimeType: 'text/csv', name: 'rows.csv' }));
    expect([...results.objects.keys()]).toEqual([expect.stringMatching(/^results\/worker\/[A-Za-z0-9_-]{43}$/)]);
    expect(Buffer.from((await service.readResult(owner, link.content[0]!.uri))!.body).toString('utf8')).toBe('rows');
  });
});
