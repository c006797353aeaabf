/**
 * A test that provokes a log line on purpose takes it out of the run's output and asserts it:
 * `const logs = captureLogs('request failed')`, then `expect(logs.entries).toEqual([...])`.
 * Only the structured log lines (one JSON object each) with those messages are taken; any other
 * line, an unexpected ERROR above all, still reaches the output and the guard (output-guard.ts).
 */
import { afterAll, onTestFinished } from 'vitest';
import { outputTap } from './output-tap.ts';

/** One structured log line, parsed. */
export interface LogEntry {
  level: string;
  message: string;
  [field: string]: unknown;
}

export interface LogCapture {
  /** The entries taken so far, in the order they were written. */
  readonly entries: LogEntry[];
  /** `level message` of each entry taken so far, e.g. `ERROR request failed`. */
  lines(): string[];
  /** Stops taking lines (done for you at the end of the test, or of the file). */
  release(): void;
}

/** Takes the log lines with these messages (exact, or matching) out of the output until the current test ends. */
export function captureLogs(...messages: (string | RegExp)[]): LogCapture {
  const capture = startCapture(messages);
  onTestFinished(() => capture.release());
  return capture;
}

/** The same for a whole file (call it at the top of a file or describe block): lines its hooks and tests provoke. */
export function captureFileLogs(...messages: (string | RegExp)[]): LogCapture {
  const capture = startCapture(messages);
  afterAll(() => capture.release());
  return capture;
}

function startCapture(messages: (string | RegExp)[]): LogCapture {
  const tap = outputTap();
  const entries: LogEntry[] = [];
  const claim = {
    takes: (line: string) => {
      const entry = parseEntry(line);
      return entry !== undefined && messages.some((message) => (typeof message === 'string' ? entry.message === message : message.test(entry.message)));
    },
    take: (line: string) => {
      entries.push(parseEntry(line) as LogEntry);
    },
  };
  tap.claims.add(claim);
  return {
    entries,
    lines: () => entries.map((entry) => `${entry.level} ${entry.message}`),
    release: () => {
      tap.claims.delete(claim);
    },
  };
}

function parseEntry(line: string): LogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as Partial<LogEntry>;
    return typeof entry.level === 'string' && typeof entry.message === 'string' ? (entry as LogEntry) : undefined;
  } catch {
    return undefined;
  }
}
