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

/** A message (exact, or matching), or a message with fields the entry must also carry (tests running at once tell theirs apart). */
export type LogMatch = string | RegExp | ({ message: string | RegExp } & Record<string, unknown>);

export interface LogCapture {
  /** The entries taken so far, in the order they were written. */
  readonly entries: LogEntry[];
  /** `level message` of each entry taken so far, e.g. `ERROR request failed`. */
  lines(): string[];
  /** Stops taking lines (done for you at the end of the test, or of the file). */
  release(): void;
}

/** Takes the log lines with these messages (exact, or matching) out of the output until the current test ends. */
export function captureLogs(...messages: LogMatch[]): LogCapture {
  const capture = startCapture(messages);
  onTestFinished(() => capture.release());
  return capture;
}

/** The same for a whole file (call it at the top of a file or describe block): lines its hooks and tests provoke. */
export function captureFileLogs(...messages: LogMatch[]): LogCapture {
  const capture = startCapture(messages);
  afterAll(() => capture.release());
  return capture;
}

function startCapture(messages: LogMatch[]): LogCapture {
  const tap = outputTap();
  const entries: LogEntry[] = [];
  const claim = {
    takes: (line: string) => {
      const entry = parseEntry(line);
      return entry !== undefined && messages.some((match) => matches(entry, match));
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

function matches(entry: LogEntry, match: LogMatch): boolean {
  if (typeof match === 'string') return entry.message === match;
  if (match instanceof RegExp) return match.test(entry.message);
  const { message, ...fields } = match;
  return matches(entry, message) && Object.entries(fields).every(([name, value]) => entry[name] === value);
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
