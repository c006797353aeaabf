/**
 * One tap per test process on process.stdout and process.stderr, where the structured logger
 * (Powertools keeps a Console of its own) and libraries write past vitest's console capture,
 * straight into the run's output. A line a test claimed (log-capture.ts) is taken out of the
 * output and handed to it; an ERROR log line or a stack trace nobody claimed still passes, and
 * is noted for the output guard (output-guard.ts).
 */

/** A test's claim on lines it provokes on purpose. */
export interface LineClaim {
  takes(line: string): boolean;
  take(line: string): void;
}

export interface Tap {
  readonly claims: Set<LineClaim>;
  /** Alarming lines nobody claimed since the guard last looked. */
  readonly unclaimed: string[];
}

/** A structured log line at ERROR, a stack frame, or one escaped inside a JSON string. */
export const ALARMING_LINE = /"level":"ERROR"|^\s+at .+:\d+:\d+\)?\s*$|\\n\s+at [^"]+?:\d+:\d+/;

// Kept on globalThis: a worker that does not isolate its files loads the support modules again per file.
const TAP = Symbol.for('async-mcp.output-tap');

/** The process's tap, installed on first use. */
export function outputTap(): Tap {
  const holder = globalThis as { [TAP]?: Tap };
  holder[TAP] ??= install();
  return holder[TAP];
}

/**
 * aws-cdk-lib's progress line for each asset it bundles, written straight to stderr at every
 * synth (about 30 in a run): a synth a test asserts on says nothing a reader of the run needs.
 */
export const CDK_BUNDLING_PROGRESS: LineClaim = {
  takes: (line) => /^Bundling asset \S+\.\.\.\r?\n?$/.test(line),
  take: () => {},
};

function install(): Tap {
  const tap: Tap = { claims: new Set([CDK_BUNDLING_PROGRESS]), unclaimed: [] };
  tapWrites(process.stdout, tap);
  tapWrites(process.stderr, tap);
  return tap;
}

/** Routes the stream's writes through the tap (exported for its test, which taps a stand-in stream). */
export function tapWrites(stream: Pick<NodeJS.WritableStream, 'write'>, tap: Tap): void {
  const write = stream.write as (...args: unknown[]) => boolean;
  stream.write = function tappedWrite(this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : undefined;
    const kept = text === undefined ? undefined : passThrough(tap, text);
    if (kept === undefined || kept === text) return write.apply(this, [chunk, ...rest]);
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (kept !== '') return write.apply(this, callback ? [kept, callback] : [kept]);
    // Nothing left to write: the caller still gets its callback, as a write would call it.
    if (callback) process.nextTick(callback);
    return true;
  } as typeof stream.write;
}

/** The text without the lines a claim took; alarming lines left in it are noted. */
function passThrough(tap: Tap, text: string): string {
  const lines = text.split(/(?<=\n)/);
  const kept: string[] = [];
  for (const line of lines) {
    const claim = [...tap.claims].find((candidate) => candidate.takes(line));
    if (claim) {
      claim.take(line);
      continue;
    }
    if (ALARMING_LINE.test(line)) tap.unclaimed.push(line);
    kept.push(line);
  }
  return kept.length === lines.length ? text : kept.join('');
}

/** The failure for the alarming lines nobody claimed since the last look (which it forgets), if any. */
export function unclaimedFailure(tap: Tap, writer: string): Error | undefined {
  const lines = tap.unclaimed.splice(0);
  if (lines.length === 0) return undefined;
  const first = (lines[0] as string).trim().slice(0, 400);
  return new Error(
    `${writer} wrote ${lines.length} line(s) of ERROR logs or stack traces to the run's output that no test expected: ` +
      `take the ones provoked on purpose with captureLogs() (test/support/log-capture.ts) and assert them. The first: ${first}`,
  );
}
