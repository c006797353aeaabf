/**
 * `startTestServer`: a project's tools on the local stack, in the test's own process, on a free
 * loopback port, with a `call` that runs a tool to its end in any dialect, answering its
 * questions from the test, and a `close` that stops everything it started.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { startLocalStack, type LocalStack } from '../local/local-stack.ts';
import { durableWaitsSkipped } from './durable-wait-skipping.ts';
import { useModuleHooks } from './module-hooks.ts';
import { runTestCall, type TestCallOptions, type TestRun } from './test-call.ts';

/** The options of {@link startTestServer}; folders are resolved against the working directory. */
export interface TestServerOptions {
  /** The tools' folder. @default 'state-machines' */
  tools?: string;
  /** The workers' folder. @default 'workers' when it exists (as `async-mcp start` chooses in a project), else the package's own */
  workers?: string;
  /**
   * Moves waits on without waiting them out: a state machine's Wait states and a durable
   * tool's `context.wait` (and step retries' delays) end at once. Questions still wait for
   * their answers, and their timeouts still count.
   * @default false
   */
  skipWaits?: boolean;
}

/** A running test server: call its tools, then close it. */
export interface TestServer {
  /** The MCP endpoint on 127.0.0.1, for any other client. */
  readonly url: URL;
  /** The names of the tools it serves. */
  readonly tools: readonly string[];
  /**
   * Calls `tool` and waits for its end: its result (a tool error is a result with `isError`),
   * the questions it asked, its progress and its log lines. A question the answers do not
   * cover rejects with UnansweredQuestionError and cancels the call; a protocol failure rejects
   * with the client library's CallFailedError.
   */
  call(tool: string, args?: Record<string, unknown>, options?: TestCallOptions): Promise<TestRun>;
  /** Stops the calls still running here and everything the server started; calling it again does nothing. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the tools of `options.tools` on the local stack, in this process, on a free 127.0.0.1 port. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  await useModuleHooks();
  const cwd = process.cwd();
  const workers = options.workers ?? (existsSync(resolve(cwd, 'workers')) ? 'workers' : undefined);
  const releaseWaits = options.skipWaits ? durableWaitsSkipped() : undefined;
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      toolsDir: resolve(cwd, options.tools ?? 'state-machines'),
      ...(workers ? { workersDir: resolve(cwd, workers) } : {}),
      host: '127.0.0.1',
      port: 0,
      ...(options.skipWaits ? { waitTimeScale: 0 } : {}),
    });
  } catch (error) {
    releaseWaits?.();
    throw error;
  }
  const running = new Set<AbortController>();
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      for (const call of running) call.abort(new Error('The test server closed while the call was running'));
      try {
        await stack.close();
      } finally {
        releaseWaits?.();
      }
    })();
    return closing;
  };
  return {
    url: stack.url,
    tools: stack.catalog.tools.map((tool) => tool.name),
    async call(tool, args = {}, callOptions = {}) {
      if (closing) throw new Error(`The test server is closed: ${tool} was not called`);
      const controller = new AbortController();
      running.add(controller);
      try {
        return await runTestCall(stack, tool, args, callOptions, controller);
      } finally {
        running.delete(controller);
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
