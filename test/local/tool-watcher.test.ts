/** The watcher behind `npm start -- --watch`: a burst of saves is one batch, and batches never overlap. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ToolWatcher, watchToolFiles } from '../../local/tool-watcher.ts';

let dir: string;
let watcher: ToolWatcher | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'async-mcp-watch-'));
  mkdirSync(join(dir, 'tools', 'greet'), { recursive: true });
  mkdirSync(join(dir, 'workers'));
});
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('watchToolFiles', () => {
  it('hands over a burst of saves in several folders, nested ones included, as one batch of absolute paths', async () => {
    const batches: string[][] = [];
    watcher = watchToolFiles([join(dir, 'tools'), join(dir, 'workers')], async (paths) => void batches.push(paths), { quietMs: 200 });
    writeFileSync(join(dir, 'tools', 'greet', 'tool.json'), '{}');
    writeFileSync(join(dir, 'tools', 'greet', 'definition.asl.json'), '{}');
    writeFileSync(join(dir, 'workers', 'greeter.ts'), 'export {}');
    await vi.waitFor(() => expect(batches).toHaveLength(1), { timeout: 5000, interval: 20 });
    expect(batches[0]).toEqual(
      expect.arrayContaining([
        join(dir, 'tools', 'greet', 'tool.json'),
        join(dir, 'tools', 'greet', 'definition.asl.json'),
        join(dir, 'workers', 'greeter.ts'),
      ]),
    );
    // Quiet since: no second batch.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(batches).toHaveLength(1);
  });

  it('holds a batch back while the last one is still being handled', async () => {
    let running = 0;
    let overlapped = false;
    const batches: string[][] = [];
    watcher = watchToolFiles(
      [join(dir, 'tools')],
      async (paths) => {
        running++;
        if (running > 1) overlapped = true;
        await new Promise((resolve) => setTimeout(resolve, 300));
        batches.push(paths);
        running--;
      },
      { quietMs: 20 },
    );
    writeFileSync(join(dir, 'tools', 'greet', 'tool.json'), '{}');
    await new Promise((resolve) => setTimeout(resolve, 100));
    writeFileSync(join(dir, 'tools', 'greet', 'mocks.json'), '{}');
    await vi.waitFor(() => expect(batches).toHaveLength(2), { timeout: 5000, interval: 20 });
    expect(overlapped).toBe(false);
    expect(batches[1]).toContain(join(dir, 'tools', 'greet', 'mocks.json'));
  });

  it('reports a folder it cannot watch, and watches the others', async () => {
    const errors: string[] = [];
    const batches: string[][] = [];
    watcher = watchToolFiles([join(dir, 'missing'), join(dir, 'workers')], async (paths) => void batches.push(paths), {
      quietMs: 20,
      onError: (message) => errors.push(message),
    });
    expect(errors).toEqual([expect.stringContaining(`Cannot watch ${join(dir, 'missing')}`)]);
    writeFileSync(join(dir, 'workers', 'greeter.ts'), 'export {}');
    await vi.waitFor(() => expect(batches).toHaveLength(1), { timeout: 5000, interval: 20 });
  });
});
