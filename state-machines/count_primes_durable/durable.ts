/**
 * count_primes_durable: counts the primes below a bound in chunks, one checkpointed step
 * each, after an optional pause (a durable wait, which costs nothing while it waits), and
 * reports progress after each chunk. Defined here alone: its settings and schemas are
 * `defineTool`'s, and the listed JSON Schema is derived from them.
 */
import { defineTool } from 'async-mcp/durable';
import { z } from 'zod';

/** Numbers from `from` up to, not including, `to`. */
interface Chunk {
  from: number;
  to: number;
}

export const handler = defineTool(
  {
    name: 'count_primes_durable',
    title: 'Count primes (durable function)',
    description:
      "Counts the prime numbers below a bound, in equal chunks counted one after another, and reports progress after each chunk. It returns how many primes there are below the bound, the largest of them, and each chunk's count. It can pause a few seconds before counting, to simulate a slow job. Call it synchronously for a quick answer, or start it asynchronously, poll its status and fetch the result when it completes. The same arguments always give the same numbers. Written as a Lambda durable function.",
    inputSchema: z.strictObject({
      below: z.number().int().min(2).max(10_000_000).describe('Count the primes strictly below this number, 2 to 10,000,000.'),
      chunks: z.number().int().min(1).max(20).optional().describe('How many equal chunks to count in, one step each, 1 to 20. Defaults to 4.'),
      pauseSeconds: z.number().int().min(0).max(60).optional().describe('Seconds to wait before counting, to simulate a slow job (0 to 60). Defaults to 2.'),
    }),
    outputSchema: z.strictObject({
      below: z.number().int().min(2).describe('The bound: every prime counted is below it.'),
      primes: z.number().int().min(0).describe('How many primes there are below the bound.'),
      largest: z.number().int().min(2).optional().describe('The largest prime below the bound (absent when there is none).'),
      chunks: z
        .array(z.strictObject({ from: z.number().int().min(0), to: z.number().int().min(1), primes: z.number().int().min(0) }))
        .describe('Each chunk in order: the numbers from `from` up to, not including, `to`, and the primes among them.'),
    }),
    invocation: 'both',
    keepAliveSeconds: 3600,
    pollIntervalSeconds: 1,
    syncTimeoutSeconds: 30,
    durable: { executionTimeoutSeconds: 900, retentionDays: 1 },
  },
  async ({ below, chunks: wanted = 4, pauseSeconds = 2 }, context) => {
    const chunks = await context.step('plan', async () => chunksBelow(below, wanted));
    await context.reportProgress({ progress: 0, total: chunks.length, message: `Counting the primes below ${below} in ${chunks.length} chunks` });
    if (pauseSeconds > 0) await context.wait('pause', { seconds: pauseSeconds });
    const counted: Array<Chunk & { primes: number; largest?: number }> = [];
    for (const [index, chunk] of chunks.entries()) {
      counted.push({ ...chunk, ...(await context.step(`count ${chunk.from}-${chunk.to}`, async () => primesIn(chunk))) });
      await context.reportProgress({ progress: index + 1, total: chunks.length, message: `Counted ${index + 1} of ${chunks.length} chunks` });
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
  },
);

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
