/**
 * count_primes_durable: counts the primes below a bound in chunks, one checkpointed step
 * each, after an optional pause (a durable wait, which costs nothing while it waits), and
 * reports progress after each chunk.
 */
import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { reportProgress, type ToolEvent, type ToolResult } from 'async-mcp/durable';

interface Arguments {
  below: number;
  chunks?: number;
  pauseSeconds?: number;
}

/** Numbers from `from` up to, not including, `to`. */
interface Chunk {
  from: number;
  to: number;
}

export const handler = withDurableExecution(async (event: ToolEvent<Arguments>, context: DurableContext): Promise<ToolResult> => {
  const { below, chunks: wanted = 4, pauseSeconds = 2 } = event.arguments;
  const chunks = await context.step('plan', async () => chunksBelow(below, wanted));
  await reportProgress(context, event, { progress: 0, total: chunks.length, message: `Counting the primes below ${below} in ${chunks.length} chunks` });
  if (pauseSeconds > 0) await context.wait('pause', { seconds: pauseSeconds });
  const counted: Array<Chunk & { primes: number; largest?: number }> = [];
  for (const [index, chunk] of chunks.entries()) {
    counted.push({ ...chunk, ...(await context.step(`count ${chunk.from}-${chunk.to}`, async () => primesIn(chunk))) });
    await reportProgress(context, event, { progress: index + 1, total: chunks.length, message: `Counted ${index + 1} of ${chunks.length} chunks` });
  }
  const primes = counted.reduce((sum, chunk) => sum + chunk.primes, 0);
  const largest = counted.findLast((chunk) => chunk.largest !== undefined)?.largest;
  return {
    structuredContent: {
      below,
      primes,
      ...(largest === undefined ? {} : { largest }),
      chunks: counted.map(({ from, to, primes }) => ({ from, to, primes })),
    },
    content: [{ type: 'text', text: `There are ${primes} primes below ${below}${largest === undefined ? '' : `; the largest is ${largest}`}.` }],
  };
});

/** [0, below) cut into `count` chunks as equal as whole numbers allow (fewer when below is small). */
function chunksBelow(below: number, count: number): Chunk[] {
  const size = Math.ceil(below / Math.min(count, below));
  const chunks: Chunk[] = [];
  for (let from = 0; from < below; from += size) chunks.push({ from, to: Math.min(from + size, below) });
  return chunks;
}

/** The primes in a chunk, by a segmented sieve of Eratosthenes: how many, and the largest. */
function primesIn({ from, to }: Chunk): { primes: number; largest?: number } {
  const composite = new Uint8Array(to - from);
  for (const p of primesUpTo(Math.floor(Math.sqrt(to - 1)))) {
    for (let multiple = Math.max(p * p, Math.ceil(from / p) * p); multiple < to; multiple += p) composite[multiple - from] = 1;
  }
  let primes = 0;
  let largest: number | undefined;
  for (let n = Math.max(from, 2); n < to; n++) {
    if (composite[n - from]) continue;
    primes++;
    largest = n;
  }
  return { primes, ...(largest === undefined ? {} : { largest }) };
}

/** The primes up to `limit`, inclusive (the sieving primes of a chunk). */
function primesUpTo(limit: number): number[] {
  const composite = new Uint8Array(limit + 1);
  const primes: number[] = [];
  for (let n = 2; n <= limit; n++) {
    if (composite[n]) continue;
    primes.push(n);
    for (let multiple = n * n; multiple <= limit; multiple += n) composite[multiple] = 1;
  }
  return primes;
}
