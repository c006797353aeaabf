/**
 * The Events soak's faults: a seeded generator, so a seed gives the same faults on every run,
 * and throttling injected on the wire of an AWS SDK client, after its retry middleware, as
 * AWS throttles (the SDK retries each; what still fails reaches our code).
 */
import type { MiddlewareClient } from '../lambdas/aws/aws-call-counter.ts';
import { INPUT_REQUIRED } from './events-soak-arrivals.ts';

/** A seeded generator (mulberry32): the same faults on every run with the same seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A question's writes: the record's (the ask writes the used keys) and its event's. */
export function isQuestionWrite(command: string, input: unknown): boolean {
  const { Item, ExpressionAttributeNames } = input as { Item?: Record<string, { S?: string }>; ExpressionAttributeNames?: Record<string, string> };
  if (command === 'PutItem') return Item?.name?.S === INPUT_REQUIRED;
  return command === 'UpdateItem' && Object.values(ExpressionAttributeNames ?? {}).includes('usedInputKeys');
}

/** Fails `rate` of the wire attempts of `commands` with a throttling error, after the SDK's retry middleware (so it retries them). */
export function injectThrottling(
  client: MiddlewareClient,
  commands: Set<string>,
  rate: number,
  errorName: string,
  random: () => number,
  matches: (command: string, input: unknown) => boolean = () => true,
  label = errorName,
): { injected: () => number } {
  let injected = 0;
  const stack = client.middlewareStack as unknown as {
    addRelativeTo(middleware: unknown, options: { relation: 'after'; toMiddleware: string; name: string }): void;
  };
  stack.addRelativeTo(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      const name = (context.commandName ?? '').replace(/Command$/, '');
      if (commands.has(name) && matches(name, (args as { input?: unknown }).input) && random() < rate) {
        injected++;
        throw Object.assign(new Error(`Injected throttling of ${name}`), {
          name: errorName,
          $fault: 'client',
          $metadata: { httpStatusCode: 400, attempts: 1 },
        });
      }
      return next(args);
    },
    { relation: 'after', toMiddleware: 'retryMiddleware', name: `eventsSoakFaults${label}` },
  );
  return { injected: () => injected };
}
