/**
 * Setup (through quiet-node-20.ts): a green run reads green. A test that wrote an ERROR log
 * line or a stack trace to the run's output without taking it (log-capture.ts) fails, the line
 * shown above; one written by a file's hooks fails the file. Looking costs one array check per test.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { outputTap, unclaimedFailure } from './output-tap.ts';

const tap = outputTap();

// What an earlier file of a worker that shares its process left behind is not this file's.
beforeAll(() => {
  tap.unclaimed.length = 0;
});
afterEach(() => failOnUnclaimed('this test'));
afterAll(() => failOnUnclaimed("this file's hooks"));

function failOnUnclaimed(writer: string): void {
  const failure = unclaimedFailure(tap, writer);
  if (failure) throw failure;
}
