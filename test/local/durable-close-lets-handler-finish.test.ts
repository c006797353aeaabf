/**
 * A local stack closed while a durable tool's handler is under way lets that invocation finish
 * (its progress written to the table, its checkpoints) before the stack's parts close under it.
 * Before, the table went first: "progress report not written" and "event not handed to webhook
 * delivery" were printed after the stack had closed, the ERROR line of a green run.
 */
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { startLocalStack } from '../../local/local-stack.ts';
import type { HeldProgressGate } from '../fixtures/held-durable-tools/held_progress/durable.ts';
import { captureLogs } from '../support/log-capture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/held-durable-tools');
const GATE = Symbol.for('async-mcp.test.held-progress');
const holder = globalThis as Record<symbol, HeldProgressGate | undefined>;

afterEach(() => {
  delete holder[GATE];
});

it('a stack closed while a durable handler runs waits for its invocation: its progress is written and nothing is logged', async () => {
  let running: () => void = () => undefined;
  const isRunning = new Promise<void>((resolve) => {
    running = resolve;
  });
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  holder[GATE] = { running, released };
  const stack = await startLocalStack({ toolsDir: FIXTURES, port: 0 });
  const logs = captureLogs(/./);
  let closing: Promise<void> | undefined;
  try {
    ok(await legacyRequest(stack.url, 'tools/call', { name: 'held_progress', arguments: {}, task: {} }));
    await isRunning;
    closing = stack.close();
    // Half a second is far less than the close's grace (5 s) and far more than a close takes.
    const first = await Promise.race([closing.then(() => 'closed'), delay(500).then(() => 'still waiting for the handler')]);
    release();
    await closing;
    expect(first).toBe('still waiting for the handler');
  } finally {
    release();
    await (closing ?? stack.close());
  }
  expect(logs.entries.filter((entry) => entry.level === 'ERROR' || entry.level === 'WARN')).toEqual([]);
});
