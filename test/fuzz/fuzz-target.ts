/**
 * What the edge fuzzer aims at: the real MCP fetch handler and core (`createAsyncMcpApp`)
 * with the repository's tool catalog, over in-memory ports, called directly (no sockets).
 * The world is seeded with operations of every dialect in every state, so mutated
 * requests reach real records; every log line is captured for the oracle.
 */
import { resolve } from 'node:path';
import { format } from 'node:util';
import { createAsyncMcpApp, type AsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import type { OperationRecord } from '../../lambdas/operations/operation.ts';
import type { ExecutionSnapshot } from '../../lambdas/operations/ports.ts';
import { RESULT_URI_PREFIX, resultUriFor } from '../../lambdas/operations/result-store.ts';
import type { ToolCatalog } from '../../lambdas/operations/tool-spec.ts';
import { inputRequestId } from '../../lambdas/mcp/input/server-requests.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';

/** The principal whose seeded operations the cases reach. */
export const OWNER = 'alice';
/** Another principal with operations of its own: its ids must read like unknown ones to OWNER. */
export const STRANGER = 'mallory';
export const ENDPOINT = 'http://127.0.0.1:3000/mcp';
export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
/** A marker that appears in seeded results (not arguments): results must stay out of logs too. */
export const RESULT_MARKER = 'resultzq7w3p9v';

/** Ids of seeded operations, by dialect and state, for the generators to aim at. */
export interface KnownIds {
  /** SEP-1391 tokens of OWNER. */
  sep: { working: string; completed: string; failed: string; canceled: string; inputRequired: string };
  /** Tasks extension (2026-07-28) task ids of OWNER. */
  ext: { working: string; completed: string; inputRequired: string };
  /** 2025-11-25 task ids of OWNER. */
  legacy: { working: string; completed: string; failed: string };
  /** Ids of STRANGER's operations (a SEP-1391 token, an extension task, a 2025-11-25 task). */
  stranger: string[];
  /** Ids of the server-to-client requests asking OWNER's open questions. */
  inputRequestIds: string[];
  /** A stored result of OWNER. */
  resultUri: string;
  /** Session ids minted at `initialize` (they carry elicitation): OWNER's, and STRANGER's. */
  sessionIds: { own: string; stranger: string };
}

/** What one request got. */
export interface TargetAnswer {
  /** Set when `fetch` (or reading its body) threw. */
  thrown?: string;
  status: number;
  headers: Headers;
  text: string;
  /** Every log line written while the request was served (logger and console). */
  logs: string[];
}

export interface FuzzTarget {
  app: AsyncMcpApp;
  store: InMemoryRecordStore;
  engine: FakeWorkflowEngine;
  known: KnownIds;
  catalog: ToolCatalog;
  /** Posts `body` with `headers` as `principal`, capturing the logs it causes. */
  send(principal: string, headers: Record<string, string>, body: string): Promise<TargetAnswer>;
  /** The tokens of `principal`'s records, from the owner listing. */
  tokensOf(principal: string): Promise<Set<string>>;
}

let catalogLoad: Promise<ToolCatalog> | undefined;

/** The repository's tools, as the Lambda loads them (definitions are not re-validated here). */
export function repositoryCatalog(): Promise<ToolCatalog> {
  catalogLoad ??= loadToolFolders(resolve(import.meta.dirname, '../../state-machines'), { checkDefinitions: false }).then((folders) =>
    buildToolCatalog(folders, (name) => `arn:aws:states:us-east-1:000000000000:stateMachine:${name}`),
  );
  return catalogLoad;
}

/** A fresh target: a new store, engine and app over the repository catalog, seeded. */
export async function createFuzzTarget(): Promise<FuzzTarget> {
  const catalog = await repositoryCatalog();
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  // EXPRESS tools answer what their output schema asks for.
  engine.syncResult = (input) => ({ executionArn: `${input.stateMachineArn}:${input.name}`, status: 'SUCCEEDED', output: { result: 42 } });
  const logs: string[] = [];
  const record = (level: string) => (message: string, fields: Record<string, unknown>) => logs.push(`${level} ${message} ${safeJson(fields)}`);
  const app = createAsyncMcpApp({
    store,
    engine,
    catalog,
    secretKey: TEST_SECRET_KEY,
    // Waits end at once, so a synchronous call or tasks/result costs no wall time.
    limits: { ...TEST_LIMITS, maxBlockingSeconds: 0.005, maxActiveOperations: 100_000 },
    results: { store: new InMemoryResultStore(), thresholdBytes: 64 },
    logger: { error: record('error'), warn: record('warn') },
    // A push stream ends after its first pass, so every answer can be read to its end.
    events: { log: new InMemoryEventLog(), maxStreamMs: 1 },
  });

  const send = async (principal: string, headers: Record<string, string>, body: string): Promise<TargetAnswer> => {
    logs.length = 0;
    const restore = captureConsole(logs);
    try {
      const request = new Request(ENDPOINT, { method: 'POST', headers, body });
      const response = await app.fetch(request, principal);
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, logs: [...logs] };
    } catch (error) {
      return {
        thrown: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        status: 0,
        headers: new Headers(),
        text: '',
        logs: [...logs],
      };
    } finally {
      restore();
    }
  };

  const tokensOf = async (principal: string): Promise<Set<string>> => {
    const tokens = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await store.listByOwner(ownerIdFor(principal), { limit: 500, ...(cursor === undefined ? {} : { cursor }) });
      for (const item of page.items) tokens.add(item.token);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tokens;
  };

  const known = await seed(app, engine, send);
  return { app, store, engine, known, catalog, send, tokensOf };
}

type Send = FuzzTarget['send'];

/** Starts, finishes, fails, cancels and questions operations of every dialect through the real edge. */
async function seed(app: AsyncMcpApp, engine: FakeWorkflowEngine, send: Send): Promise<KnownIds> {
  const suite = (n: number) => ({ suite: `seed-suite-${n}`, tests: 3, failures: 1, durationSeconds: 60 });
  const approve = { environment: 'staging', changes: ['api: v1'] };
  const sepCall = (principal: string, token: string, name: string, args: unknown, capabilities: Record<string, unknown> = {}) =>
    rpc(send, principal, legacyHeaders(), 'tools/call', {
      name,
      arguments: args,
      operation: { token },
      _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
    });
  const extCall = async (principal: string, name: string, args: unknown, capabilities: Record<string, unknown> = {}) => {
    const result = await rpc(send, principal, modernHeaders('tools/call', name), 'tools/call', {
      name,
      arguments: args,
      _meta: modernMeta({ extensions: { 'io.modelcontextprotocol/tasks': {} }, ...capabilities }),
    });
    return String(result.taskId);
  };
  const legacyTask = async (principal: string, args: unknown) =>
    String(
      (
        (await rpc(send, principal, legacyHeaders(), 'tools/call', { name: 'run_test_suite', arguments: args, task: { ttl: 60_000 } })).task as {
          taskId: string;
        }
      ).taskId,
    );

  const elicitation = { elicitation: { form: {} } };
  await sepCall(OWNER, 'seed-working', 'run_test_suite', suite(1));
  await sepCall(OWNER, 'seed-completed', 'run_test_suite', suite(2));
  await sepCall(OWNER, 'seed-failed', 'run_test_suite', suite(3));
  await sepCall(OWNER, 'seed-canceled', 'run_test_suite', suite(4));
  await sepCall(OWNER, 'seed-input', 'approve_deployment', approve, elicitation);
  const ext = {
    working: await extCall(OWNER, 'run_test_suite', suite(5)),
    completed: await extCall(OWNER, 'run_test_suite', suite(6)),
    inputRequired: await extCall(OWNER, 'approve_deployment', approve, elicitation),
  };
  const legacy = { working: await legacyTask(OWNER, suite(7)), completed: await legacyTask(OWNER, suite(8)), failed: await legacyTask(OWNER, suite(9)) };
  await sepCall(STRANGER, 'seed-stranger', 'run_test_suite', suite(10));
  const stranger = ['seed-stranger', await extCall(STRANGER, 'run_test_suite', suite(11)), await legacyTask(STRANGER, suite(12))];

  const owner = ownerIdFor(OWNER);
  const finish = async (token: string, result: Partial<ExecutionSnapshot> & Pick<ExecutionSnapshot, 'status'>) => {
    const current = await app.operations.readCurrent({ ownerId: owner, token });
    if (!current.executionArn) throw new Error(`operation ${token} has no execution to finish`);
    return (await app.operations.applyExecution({ ownerId: owner, token }, engine.finish(current.executionArn, result))) as OperationRecord;
  };
  const output = (n: number) => ({ suite: `${RESULT_MARKER}-${n}`, passed: 2, failed: 1, durationSeconds: 60 });
  const spilled = await finish('seed-completed', { status: 'SUCCEEDED', output: output(1) });
  await finish(ext.completed, { status: 'SUCCEEDED', output: output(2) });
  await finish(legacy.completed, { status: 'SUCCEEDED', output: output(3) });
  await finish('seed-failed', { status: 'FAILED', error: 'TestSuiteCrashed', cause: `crashed ${RESULT_MARKER}` });
  await finish(legacy.failed, { status: 'FAILED', error: 'TestSuiteCrashed', cause: `crashed ${RESULT_MARKER}` });
  await app.operations.cancel({ ownerId: owner, token: 'seed-canceled' });

  const question = { method: 'elicitation/create', params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } } };
  const inputRequestIds: string[] = [];
  for (const token of ['seed-input', ext.inputRequired]) {
    const record = await app.operations.readCurrent({ ownerId: owner, token });
    const { key } = await app.operations.inputs.ask({
      operation: { ownerId: owner, token },
      executionName: record.executionName,
      key: 'confirm',
      request: question,
      taskToken: `tt-${token}`,
    });
    inputRequestIds.push(inputRequestId(token, key));
  }
  // Stored as is, or shaped at completion into the resource_link the client reads.
  const resultUri =
    spilled.outcome?.kind === 'stored-result'
      ? resultUriFor(spilled.outcome.resultId)
      : spilled.outcome?.kind === 'call-tool-result'
        ? (spilled.outcome.result.content as Array<{ uri?: string }> | undefined)?.[0]?.uri
        : undefined;
  if (!resultUri?.startsWith(RESULT_URI_PREFIX))
    throw new Error(`the seeded result was not stored as a resource: ${JSON.stringify(spilled.outcome).slice(0, 300)}`);
  const sessionOf = async (principal: string) => {
    const params = { protocolVersion: LEGACY, capabilities: elicitation, clientInfo: { name: 'edge-fuzz', version: '1.0.0' } };
    const answer = await send(principal, legacyHeaders(), JSON.stringify({ jsonrpc: '2.0', id: 'seed-init', method: 'initialize', params }));
    const id = answer.headers.get('mcp-session-id');
    if (!id) throw new Error(`seeding initialize minted no session id: HTTP ${answer.status}`);
    return id;
  };
  return {
    sep: { working: 'seed-working', completed: 'seed-completed', failed: 'seed-failed', canceled: 'seed-canceled', inputRequired: 'seed-input' },
    ext,
    legacy,
    stranger,
    inputRequestIds,
    resultUri,
    sessionIds: { own: await sessionOf(OWNER), stranger: await sessionOf(STRANGER) },
  };
}

/** The headers every well-formed POST carries. */
export const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as const;

export function legacyHeaders(version = LEGACY): Record<string, string> {
  return { ...BASE_HEADERS, 'mcp-protocol-version': version };
}

/** 2026-07-28 standard headers: the protocol version, Mcp-Method and, when the request names something, Mcp-Name. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return { ...BASE_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) };
}

/** The 2026-07-28 per-request envelope. */
export function modernMeta(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'edge-fuzz', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

let seedId = 0;

/** A seeding request that must succeed; its result. */
async function rpc(
  send: Send,
  principal: string,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const answer = await send(principal, headers, JSON.stringify({ jsonrpc: '2.0', id: `seed-${++seedId}`, method, params }));
  const message = parseAnswerMessages(answer.text).find((m) => 'result' in m || 'error' in m);
  if (!message || !('result' in message)) throw new Error(`seeding ${method} failed: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
  return message.result as Record<string, unknown>;
}

/** The JSON-RPC messages of a response body: one JSON message, a JSON array, or SSE `data:` lines. */
export function parseAnswerMessages(text: string): Array<Record<string, unknown>> {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const parsed: unknown = JSON.parse(trimmed);
    return (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
  }
  return trimmed
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

/** Every console write while a request is served counts as a log line. */
function captureConsole(into: string[]): () => void {
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const saved = methods.map((name) => [name, console[name]] as const);
  // util.format writes what the console would have printed, error messages and stacks included.
  for (const name of methods) console[name] = (...args: unknown[]) => void into.push(`console.${name} ${format(...args)}`);
  return () => {
    for (const [name, original] of saved) console[name] = original;
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
