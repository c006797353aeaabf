/**
 * This server on the local stack in a process of its own, for the poll benchmark: so it
 * gets a core as the reference server does (dynalite runs in a third process). It starts
 * one waiting `analyze_dataset` operation per async dialect and reports, over IPC, the URL
 * and each operation's id. Closes on a `{ close: true }` message or when the IPC channel closes.
 * With `--starts`, one principal may keep any number of operations running (the starts bench),
 * and the process reports where its AWS stand-ins listen (mcp-function-process.ts serves the
 * MCP function apart on them).
 * OpenTelemetry's standard environment (`OTEL_EXPORTER_OTLP_ENDPOINT`) turns tracing on, as for
 * `npm start`: the polls bench runs a second one so, exporting to a loopback receiver.
 */
import { pathToFileURL } from 'node:url';
import { DEFAULT_LIMITS } from '../lambdas/operations/operations-service.ts';
import { startLocalStack } from '../local/local-stack.ts';
import { startLocalTracing } from '../local/local-tracing.ts';
import { legacyRequest, modernRequest } from '../test/support/raw-mcp.ts';
import { answerBenchParent } from './bench-child.ts';
import type { StackEndpoints } from './mcp-function-process.ts';

/** What the process reports once it serves. */
export interface LocalServerReady {
  url: string;
  /** A 2025-11-25 task (`tools/call` with `params.task`). */
  legacyTaskId: string;
  /** A Tasks-extension (2026-07-28) task. */
  modernTaskId: string;
  /** A SEP-1391 operation token. */
  token: string;
  /** With `--starts`: where the stack's AWS stand-ins listen, for an MCP function in another process. */
  endpoints?: StackEndpoints;
}

/** The `_meta` capability that makes a 2026-07-28 `tools/call` a task. */
export const TASKS_EXTENSION = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** The SEP-1391 client capability. */
export const LONG_RUNNING_OPERATIONS = { experimental: { longRunningOperations: {} } };
/** Arguments of a run that waits (an hour) before it does anything: its status stays `working`. */
export const WAITING_RUN = { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } };

/** Starts one waiting operation in each async dialect on the server at `url`. */
export async function startWaitingOperations(url: URL): Promise<Omit<LocalServerReady, 'url'>> {
  const legacy = await legacyRequest(url, 'tools/call', { ...WAITING_RUN, task: {} });
  const modern = await modernRequest(url, 'tools/call', WAITING_RUN, { capabilities: TASKS_EXTENSION });
  const token = `bench-${process.pid}-${Date.now()}`;
  const sep = await legacyRequest(url, 'tools/call', { ...WAITING_RUN, operation: { token } }, { capabilities: LONG_RUNNING_OPERATIONS });
  const legacyTaskId = legacy.message?.result?.task?.taskId;
  const modernTaskId = modern.message?.result?.taskId;
  if (typeof legacyTaskId !== 'string' || typeof modernTaskId !== 'string' || !sep.message?.result) {
    throw new Error(`could not start the waiting operations: ${legacy.text} ${modern.text} ${sep.text}`);
  }
  return { legacyTaskId, modernTaskId, token };
}

if (process.send && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // --starts: the starts bench leaves every operation it starts waiting, far past the per-principal default.
  const starts = process.argv.includes('--starts');
  // Before the stack serves, as npm start does: nothing is loaded unless the environment asks.
  const tracing = await startLocalTracing(false);
  const stack = await startLocalStack({
    toolsDir: 'state-machines',
    port: 0,
    ...(starts ? { limits: { ...DEFAULT_LIMITS, maxActiveOperations: 1_000_000 } } : {}),
  });
  const ids = await startWaitingOperations(stack.url);
  const stop = () =>
    void stack
      .close()
      .then(() => tracing?.shutdown())
      .then(() => process.exit(0));
  answerBenchParent(stop);
  const endpoints: StackEndpoints = {
    dynamodb: stack.dynamo.endpoint,
    tableName: stack.dynamo.tableName,
    stepFunctions: stack.sfnEndpoint,
    ...(stack.durableEndpoint ? { lambda: stack.durableEndpoint } : {}),
    s3: stack.results.endpoint,
    bucketName: stack.results.bucketName,
  };
  process.send({ url: stack.url.href, ...ids, ...(starts ? { endpoints } : {}) } satisfies LocalServerReady);
}
