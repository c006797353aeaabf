/**
 * The shared set-up of the facade tests: a facade per test driven by the real SFNClient,
 * closed after the test, whose log must never contain SECRET (a stand-in tool argument).
 */
import { DescribeExecutionCommand, SFNClient, type DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';
import { afterEach, expect, vi } from 'vitest';
import { startSfnFacade, type SfnFacade, type SfnFacadeOptions } from '../../local/stepfunctions/sfn-facade.ts';

export const SECRET = 'tool-argument-that-must-not-be-logged';

export function definition(states: Record<string, unknown>, startAt = Object.keys(states)[0] ?? ''): string {
  return JSON.stringify({ StartAt: startAt, States: states });
}

export const input = (value: unknown) => JSON.stringify(value);

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export class ValidationError extends Error {
  override name = 'ValidationError';
}

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Registers the clean-up for this file and returns `start`, which starts a facade and a client on it. */
export function useFacadeHarness() {
  const started: SfnFacade[] = [];
  const logLines: string[] = [];
  const logger = { warn: (...args: unknown[]) => logLines.push(args.join(' ')), error: (...args: unknown[]) => logLines.push(args.join(' ')) };

  afterEach(async () => {
    await Promise.all(started.splice(0).map((facade) => facade.close()));
    expect(logLines.join('\n')).not.toContain(SECRET);
    logLines.length = 0;
  });

  async function start(options: Partial<SfnFacadeOptions> & Pick<SfnFacadeOptions, 'stateMachines'>) {
    const facade = await startSfnFacade({ resolveWorker: () => async (event) => event, logger, ...options });
    started.push(facade);
    const client = new SFNClient({
      region: 'us-east-1',
      endpoint: facade.endpoint,
      credentials: LOCAL_CREDENTIALS,
      // StartSyncExecution's endpoint trait would otherwise send it to `sync-127.0.0.1`.
      disableHostPrefix: true,
    });
    /** Describes the execution until it is no longer RUNNING. */
    const describeUntilDone = (executionArn: string, timeout = 10_000): Promise<DescribeExecutionCommandOutput> =>
      vi.waitFor(
        async () => {
          const described = await client.send(new DescribeExecutionCommand({ executionArn }));
          if (described.status === 'RUNNING') throw new Error(`${executionArn} is still RUNNING`);
          return described;
        },
        { timeout, interval: 20 },
      );
    return { facade, client, describeUntilDone };
  }

  return { start, logger, logLines };
}
