/**
 * The structured logger builds its Powertools Logger with its first line (a cold start that
 * logs nothing does not build it): that first line, and the level it was given, are as when
 * it was built up front.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStructuredLogger, SERVICE_NAME } from '../../lambdas/observability/structured-logger.ts';

const out: string[] = [];
const err: string[] = [];

beforeEach(() => {
  out.length = 0;
  err.length = 0;
  for (const [stream, lines] of [
    [process.stdout, out],
    [process.stderr, err],
  ] as const) {
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array) => {
      lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write);
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

const parsed = (lines: string[]) =>
  lines
    .join('')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the structured logger', () => {
  it('writes nothing when built, and its first line is one JSON object naming the service, the level and the fields', () => {
    const logger = createStructuredLogger();
    expect(out.concat(err)).toEqual([]);
    logger.info?.('first line', { tool: 'job' });
    expect(parsed(out)).toEqual([expect.objectContaining({ level: 'INFO', message: 'first line', service: SERVICE_NAME, tool: 'job' })]);
    logger.error('then an error', { code: 'X' });
    expect(parsed(err)).toEqual([expect.objectContaining({ level: 'ERROR', message: 'then an error', service: SERVICE_NAME, code: 'X' })]);
  });

  it('keeps the level and service it was given from its first line', () => {
    const logger = createStructuredLogger({ logLevel: 'WARN', serviceName: 'other' });
    logger.info?.('below the level', {});
    logger.debug?.('below the level too', {});
    logger.warn('at the level', {});
    expect(out).toEqual([]);
    expect(parsed(err)).toEqual([expect.objectContaining({ level: 'WARN', message: 'at the level', service: 'other' })]);
  });
});
