/**
 * Durable handlers the local durable service's tests run: each built with
 * `withDurableExecution` exactly as a tool's `durable.ts` would be.
 */
import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';

interface NumberInput {
  value: number;
}

/** Two checkpointed steps, then a result computed from both. */
export const stepsHandler = withDurableExecution(async (event: NumberInput, context: DurableContext) => {
  const doubled = await context.step('double', async () => event.value * 2);
  const plusOne = await context.step('add-one', async () => doubled + 1);
  return { doubled, plusOne };
});

/** Fails outside any step: the execution fails with this error. */
export const failingHandler = withDurableExecution(async (_event: unknown, context: DurableContext) => {
  await context.step('before-failure', async () => 'done');
  throw new Error('the dataset could not be read');
});

/** Waits one second between two steps that read the clock. */
export const waitingHandler = withDurableExecution(async (_event: unknown, context: DurableContext) => {
  const before = await context.step('before-wait', async () => Date.now());
  await context.wait('one-second', { seconds: 1 });
  const after = await context.step('after-wait', async () => Date.now());
  return { before, after };
});

/** The wait of {@link spanningWaitHandler}: long enough to restart the service in, on a loaded machine too. */
export const SPANNING_WAIT_SECONDS = 4;

/** Waits {@link SPANNING_WAIT_SECONDS} between two steps that read the clock. */
export const spanningWaitHandler = withDurableExecution(async (_event: unknown, context: DurableContext) => {
  const before = await context.step('before-wait', async () => Date.now());
  await context.wait('spanning-wait', { seconds: SPANNING_WAIT_SECONDS });
  const after = await context.step('after-wait', async () => Date.now());
  return { before, after };
});

/** Waits an hour: only a stop ends it in a test. */
export const longWaitHandler = withDurableExecution(async (_event: unknown, context: DurableContext) => {
  await context.wait('an-hour', { hours: 1 });
  return 'woke up';
});

const callbackWaiters = new Map<string, (callbackId: string) => void>();
const callbackIds = new Map<string, Promise<string>>();

/** The callback id the approval handler's run keyed `key` handed out, once it has. */
export function callbackIdFor(key: string): Promise<string> {
  let id = callbackIds.get(key);
  if (!id) {
    id = new Promise((resolve) => callbackWaiters.set(key, resolve));
    callbackIds.set(key, id);
  }
  return id;
}

const approvalRuns = new Map<string, { invocations: number; stepRuns: number }>();

/** How often the approval handler keyed `key` was invoked, and how often its step ran. */
export function approvalRunsOf(key: string): { invocations: number; stepRuns: number } {
  return approvalRuns.get(key) ?? { invocations: 0, stepRuns: 0 };
}

/**
 * Runs a step, asks for approval through a callback kept alive by heartbeats, then reports the
 * answer: a replay after the answer returns the step's checkpointed result without running it.
 */
export const approvalHandler = withDurableExecution(async (event: { key: string }, context: DurableContext) => {
  const runs = approvalRuns.get(event.key) ?? { invocations: 0, stepRuns: 0 };
  approvalRuns.set(event.key, runs);
  runs.invocations += 1;
  const requestedBy = await context.step('record-request', async () => {
    runs.stepRuns += 1;
    return 'pipeline';
  });
  const answer = await context.waitForCallback<string>(
    'approval',
    async (callbackId) => {
      void callbackIdFor(event.key);
      callbackWaiters.get(event.key)?.(callbackId);
    },
    { heartbeatTimeout: { hours: 1 } },
  );
  return { requestedBy, approved: JSON.parse(answer) as unknown };
});

interface Progress {
  percent: number;
  message: string;
}

/**
 * A tiny analysis in the shape a durable tool takes: checkpointed stages, each reporting its
 * progress, with a wait between them; the progress reports are part of the result.
 */
export const analyzeHandler = withDurableExecution(async (event: { rows: number[] }, context: DurableContext) => {
  const progress: Progress[] = [];
  const loaded = await context.step('load', async () => event.rows.filter((row) => Number.isFinite(row)));
  progress.push(await context.step('report-loaded', async () => ({ percent: 50, message: `${loaded.length} rows loaded` })));
  await context.wait('cool-down', { seconds: 30 });
  const total = await context.step('sum', async () => loaded.reduce((sum, row) => sum + row, 0));
  progress.push(await context.step('report-done', async () => ({ percent: 100, message: 'summed' })));
  return { total, progress };
});

/**
 * Lets a first callback time out after a second, then waits for a second callback, handed out
 * as the approval handler hands out its own: the timeout is a change the worker makes itself.
 */
export const timeoutThenApprovalHandler = withDurableExecution(async (event: { key: string }, context: DurableContext) => {
  const [unanswered] = await context.createCallback<string>('unanswered', { timeout: { seconds: 1 } });
  const first = await unanswered.then(
    () => 'answered',
    () => 'timed out',
  );
  const answer = await context.waitForCallback<string>('approval', async (callbackId) => {
    void callbackIdFor(event.key);
    callbackWaiters.get(event.key)?.(callbackId);
  });
  return { first, approved: JSON.parse(answer) as unknown };
});

const flakyAttempts = new Map<string, number[]>();

/** When each attempt of the flaky handler keyed `key` ran (epoch milliseconds). */
export function flakyAttemptsOf(key: string): number[] {
  return flakyAttempts.get(key) ?? [];
}

/** A step that fails its first attempt and succeeds on the retry, {@link SPANNING_WAIT_SECONDS} later. */
export const flakyStepHandler = withDurableExecution(async (event: { key: string }, context: DurableContext) => {
  const attempts = flakyAttempts.get(event.key) ?? [];
  flakyAttempts.set(event.key, attempts);
  return context.step(
    'flaky',
    async () => {
      attempts.push(Date.now());
      if (attempts.length === 1) throw new Error('the first attempt fails');
      return attempts.length;
    },
    { retryStrategy: (_error, attempt) => ({ shouldRetry: attempt < 3, delay: { seconds: SPANNING_WAIT_SECONDS } }) },
  );
});

/**
 * Hands out a callback keyed `key` (as the approval handler does), which closes after
 * `timeoutSeconds` unless answered first; either way the run then waits an hour, so it is
 * still running when the closed callback is answered.
 */
export const callbackThenWaitHandler = withDurableExecution(async (event: { key: string; timeoutSeconds: number }, context: DurableContext) => {
  const [answer, callbackId] = await context.createCallback<string>('closes', { timeout: { seconds: event.timeoutSeconds } });
  await context.step('hand-out', async () => {
    void callbackIdFor(event.key);
    callbackWaiters.get(event.key)?.(callbackId);
  });
  const outcome = await answer.then(
    () => 'answered',
    () => 'timed out',
  );
  await context.wait('an-hour', { hours: 1 });
  return outcome;
});
