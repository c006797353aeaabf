/**
 * Structured logs (issue 14, Logs): requests through the real app on in-memory ports, served
 * the way the Lambda serves them (each invocation in a context named by its request id),
 * with what the process writes to stdout and stderr captured. Every line is one JSON object
 * that names the request id, the method, the tool, the principal and the operation (hashes)
 * and the dialect; no tool argument appears in any.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { noMetrics } from '../../lambdas/observability/metrics-recorder.ts';
import { annotateRequest, hashForLog, withRequestContext } from '../../lambdas/observability/request-context.ts';
import { observeInvocation } from '../../lambdas/observability/request-observer.ts';
import { createStructuredLogger } from '../../lambdas/observability/structured-logger.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import type { OperationKey, OperationRecord } from '../../lambdas/operations/operation.ts';
import { createToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const LRO = { experimental: { longRunningOperations: {} } };

/** A store whose reads fail while `failReads` is set: the request then fails with a logged internal error. */
class FlakyStore extends InMemoryRecordStore {
  failReads = false;
  override async get(key: OperationKey): Promise<OperationRecord | undefined> {
    if (this.failReads) throw new Error('store unreachable');
    return super.get(key);
  }
}

const written: string[] = [];
const store = new FlakyStore();
const engine = new FakeWorkflowEngine();
let server: NodeHttpServer;
let invocations = 0;

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write);
  }
  const app = createAsyncMcpApp({
    store,
    engine,
    catalog: createToolCatalog([testTool({ name: 'job' })]),
    limits: TEST_LIMITS,
    secretKey: TEST_SECRET_KEY,
    logger: createStructuredLogger(),
  });
  const invocation = observeInvocation(noMetrics);
  // As the Lambda adapter does: one invocation per request, named by its request id.
  server = await serveFetch(
    (request) => invocation({ awsRequestId: `aws-req-${++invocations}` }, () => app.fetch(request, request.headers.get('authorization') ?? 'anonymous')),
    { host: '127.0.0.1', port: 0, path: '/mcp' },
  );
});

afterAll(async () => {
  await server.close();
  vi.restoreAllMocks();
});

beforeEach(() => {
  written.length = 0;
  store.failReads = false;
  engine.failStartWith = undefined;
});

/** Every captured line, parsed; a line that is not JSON fails the test. */
function logLines(): Array<Record<string, unknown>> {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const marker = () => `argmark-${randomBytes(6).toString('hex')}`;

describe('structured JSON log lines carry the request context', () => {
  it('a SEP-1391 start that fails: request id, method, tool, principal hash, token hash and dialect, and no argument', async () => {
    const secret = marker();
    const token = `tok-${randomBytes(6).toString('hex')}`;
    engine.failStartWith = new Error('engine unreachable');
    const response = await legacyRequest(
      server.url,
      'tools/call',
      { name: 'job', arguments: { note: secret }, operation: { token }, _meta: { 'io.modelcontextprotocol/clientCapabilities': LRO } },
      { headers: { authorization: 'alice' } },
    );
    rpcError(response);
    const lines = logLines();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        service: 'async-mcp',
        function_request_id: `aws-req-${invocations}`,
        method: 'tools/call',
        tool: 'job',
        principalHash: ownerIdFor('alice'),
        operationHash: hashForLog(token),
        dialect: 'sep-1391',
      }),
    );
    expect(written.join('')).not.toContain(secret);
    expect(written.join('')).not.toContain(token);
  });

  it("a Tasks-extension poll whose read fails: the task id is hashed, the dialect is the era's", async () => {
    const secret = marker();
    const created = ok(
      await modernRequest(server.url, 'tools/call', { name: 'job', arguments: { note: secret } }, { capabilities: EXT, headers: { authorization: 'bob' } }),
    );
    const taskId = created.taskId as string;
    store.failReads = true;
    rpcError(await modernRequest(server.url, 'tasks/get', { taskId }, { capabilities: EXT, headers: { authorization: 'bob' } }));
    const errors = logLines().filter((line) => line.level === 'ERROR');
    expect(errors).toContainEqual(
      expect.objectContaining({
        function_request_id: `aws-req-${invocations}`,
        method: 'tasks/get',
        principalHash: ownerIdFor('bob'),
        operationHash: hashForLog(taskId),
        dialect: 'tasks-2026-07-28',
        era: 'modern',
      }),
    );
    expect(written.join('')).not.toContain(secret);
    expect(written.join('')).not.toContain(taskId);
  });

  it('concurrent requests keep their own context: each line names its own request', async () => {
    engine.failStartWith = new Error('engine unreachable');
    const tokens = Array.from({ length: 4 }, (_, i) => `tok-${i}-${randomBytes(4).toString('hex')}`);
    await Promise.all(
      tokens.map((token) =>
        legacyRequest(server.url, 'tools/call', {
          name: 'job',
          arguments: {},
          operation: { token },
          _meta: { 'io.modelcontextprotocol/clientCapabilities': LRO },
        }),
      ),
    );
    const errors = logLines().filter((line) => line.level === 'ERROR');
    expect(new Set(errors.map((line) => line.operationHash))).toEqual(new Set(tokens.map(hashForLog)));
    // One request id per token: no line borrowed another request's context.
    const idsByToken = new Map<unknown, Set<unknown>>();
    for (const line of errors) idsByToken.set(line.operationHash, (idsByToken.get(line.operationHash) ?? new Set()).add(line.function_request_id));
    expect([...idsByToken.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(new Set(errors.map((line) => line.function_request_id)).size).toBe(tokens.length);
  });

  it('a field the caller passes wins over the context, and lines outside a request carry none', () => {
    const logger = createStructuredLogger();
    withRequestContext({ function_request_id: 'outer', method: 'tools/list' }, () => logger.warn('inside', { method: 'explicit' }));
    logger.warn('outside', { eventId: 'e1' });
    const [inside, outside] = logLines();
    expect(inside).toMatchObject({ level: 'WARN', message: 'inside', function_request_id: 'outer', method: 'explicit' });
    expect(outside).toMatchObject({ level: 'WARN', message: 'outside', eventId: 'e1' });
    expect(outside).not.toHaveProperty('function_request_id');
  });

  it('a line carries the fields the request has named so far, and only those', () => {
    const logger = createStructuredLogger();
    withRequestContext({ function_request_id: 'r1' }, () => {
      logger.warn('early', {});
      withRequestContext({}, () => {
        annotateRequest({ method: 'tasks/get', era: 'modern' });
        logger.warn('later', { tool: 'explicit' });
      });
    });
    const [early, later] = logLines();
    expect(early).toMatchObject({ function_request_id: 'r1' });
    expect(early).not.toHaveProperty('method');
    expect(early).not.toHaveProperty('era');
    expect(later).toMatchObject({ function_request_id: 'r1', method: 'tasks/get', era: 'modern', tool: 'explicit' });
    expect(later).not.toHaveProperty('dialect');
    expect(later).not.toHaveProperty('operationHash');
  });
});
