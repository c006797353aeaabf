/**
 * A green run reads green: a log line a test provokes on purpose is taken out of the output and
 * handed to the test, and an ERROR line or a stack trace nobody took still passes, noted for
 * the guard that fails the test which wrote it.
 */
import { describe, expect, it, vi } from 'vitest';
import { captureLogs } from '../support/log-capture.ts';
import { CDK_BUNDLING_PROGRESS, type LineClaim, type Tap, tapWrites, unclaimedFailure } from '../support/output-tap.ts';

const line = (level: string, message: string) => `${JSON.stringify({ level, message, service: 'async-mcp' })}\n`;

function tappedStandIn(claims: LineClaim[] = []) {
  const tap: Tap = { claims: new Set(claims), unclaimed: [] };
  const written: string[] = [];
  const stream = {
    write: (chunk: unknown, callback?: () => void) => {
      written.push(String(chunk));
      callback?.();
      return true;
    },
  };
  tapWrites(stream as never, tap);
  return { tap, written, write: (text: string, callback?: () => void) => (stream.write as (text: string, callback?: () => void) => boolean)(text, callback) };
}

describe('the output tap', () => {
  it("keeps aws-cdk-lib's progress line for each asset it bundles out of the output, and nothing else", () => {
    const { written, write } = tappedStandIn([CDK_BUNDLING_PROGRESS]);
    write('Bundling asset AsyncMcpTest/Server/Mcp/Function/Code/Stage...\n');
    write('Bundling asset failed: esbuild exited with 1\n');
    write('deployment note: Bundling asset AsyncMcpTest/Server/Mcp/Function/Code/Stage...\n');
    expect(written).toEqual([
      'Bundling asset failed: esbuild exited with 1\n',
      'deployment note: Bundling asset AsyncMcpTest/Server/Mcp/Function/Code/Stage...\n',
    ]);
  });

  it('passes an ERROR line and a stack trace nobody claimed, and notes them for the guard', () => {
    const { tap, written, write } = tappedStandIn();
    write(line('ERROR', 'request failed'));
    write('Error: boom\n    at run (/work/x.ts:3:9)\n');
    write(`${JSON.stringify({ level: 'INFO', message: 'Error: refused\n    at TCPConnectWrap.afterConnect (node:net:1611:16)' })}\n`);
    expect(written).toHaveLength(3);
    expect(tap.unclaimed).toEqual([line('ERROR', 'request failed'), '    at run (/work/x.ts:3:9)\n', written[2]]);
  });

  it('gives the guard a failure naming the first unclaimed line, once: the next look starts afresh', () => {
    const { tap, write } = tappedStandIn();
    expect(unclaimedFailure(tap, 'this test')).toBeUndefined();
    write(line('ERROR', 'request failed'));
    write('    at run (/work/x.ts:3:9)\n');
    expect(unclaimedFailure(tap, 'this test')?.message).toMatch(
      /^this test wrote 2 line\(s\) of ERROR logs or stack traces .*The first: \{"level":"ERROR","message":"request failed"/,
    );
    expect(unclaimedFailure(tap, 'this test')).toBeUndefined();
  });

  it('leaves a WARN line, a plain line and a line that only mentions "at" alone', () => {
    const { tap, written, write } = tappedStandIn();
    write(line('WARN', 'request rejected'));
    write('look at this: 12:30\n');
    expect(written).toEqual([line('WARN', 'request rejected'), 'look at this: 12:30\n']);
    expect(tap.unclaimed).toEqual([]);
  });

  it('takes a claimed line out of the output, keeping the rest of the chunk, and still calls back', () => {
    const taken: string[] = [];
    const claim = { takes: (text: string) => text.includes('"request failed"'), take: (text: string) => taken.push(text) };
    const { tap, written, write } = tappedStandIn([claim]);
    const done = vi.fn();
    write(`${line('ERROR', 'request failed')}kept\n`);
    write(line('ERROR', 'request failed'), done);
    expect(written).toEqual(['kept\n']);
    expect(taken).toEqual([line('ERROR', 'request failed'), line('ERROR', 'request failed')]);
    expect(tap.unclaimed).toEqual([]);
    return vi.waitFor(() => expect(done).toHaveBeenCalledOnce());
  });
});

describe('captureLogs', () => {
  it("takes the test's expected lines off the process's output, parsed, and lets go when the test ends", () => {
    const logs = captureLogs('answer ignored: its question had closed', /^token rejected/);
    process.stderr.write(line('WARN', 'answer ignored: its question had closed'));
    process.stderr.write(line('WARN', 'token rejected: expired'));
    expect(logs.lines()).toEqual(['WARN answer ignored: its question had closed', 'WARN token rejected: expired']);
    expect(logs.entries[0]).toMatchObject({ service: 'async-mcp' });
  });

  it('with fields, takes only the entries that carry them too: tests running at once take their own lines', () => {
    const mine = captureLogs({ message: 'request rejected', dialect: 'sep-1391' });
    const theirs = captureLogs({ message: 'request rejected', dialect: 'sync' });
    process.stderr.write(`${JSON.stringify({ level: 'WARN', message: 'request rejected', dialect: 'sync' })}\n`);
    process.stderr.write(`${JSON.stringify({ level: 'WARN', message: 'request rejected', dialect: 'sep-1391' })}\n`);
    expect(mine.entries).toEqual([{ level: 'WARN', message: 'request rejected', dialect: 'sep-1391' }]);
    expect(theirs.entries).toEqual([{ level: 'WARN', message: 'request rejected', dialect: 'sync' }]);
  });
});
