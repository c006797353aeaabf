/**
 * Issue 10, "Results of any size", end to end over the local stack (s3rver as the results
 * bucket): export_dataset's CSV of 100,000 rows, far past Step Functions' 256 KB state
 * output, comes back in full through resources/read, to its owner only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { datasetCsv } from '../../lambdas/examples/dataset-csv.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../support/rpc-assertions.ts';

const ROWS = 100_000;
const SEED = 7;
const OWNER = { authorization: 'Bearer owner-of-the-export' };
const STRANGER = { authorization: 'Bearer someone-else' };

let stack: LocalStack;
let link: { uri: string; mimeType: string; size: number; type: string };

beforeAll(async () => {
  stack = await startTestStack();
  const created = ok(
    await legacyRequest(stack.url, 'tools/call', { name: 'export_dataset', arguments: { rows: ROWS, seed: SEED }, task: { ttl: 600_000 } }, { headers: OWNER }),
  );
  const taskId = created.task.taskId as string;
  await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }, { headers: OWNER }), ['completed'], { timeout: 60_000 });
  const result = ok(await legacyRequest(stack.url, 'tasks/result', { taskId }, { headers: OWNER }));
  link = result.content[0];
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

describe('export_dataset { rows: 100000 }', () => {
  it('answers with one resource_link of our scheme, typed text/csv, sized as the file', () => {
    const expected = datasetCsv(ROWS, SEED);
    expect(Buffer.byteLength(expected)).toBeGreaterThan(256 * 1024);
    expect(link).toMatchObject({ type: 'resource_link', mimeType: 'text/csv', size: Buffer.byteLength(expected) });
    expect(link.uri.startsWith('async-mcp://results/')).toBe(true);
  });

  it('resources/read returns the whole CSV: the index,value header and one line per row', async () => {
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: link.uri }, { headers: OWNER }));
    expect(read.contents).toHaveLength(1);
    const [content] = read.contents;
    expect(content).toMatchObject({ uri: link.uri, mimeType: 'text/csv' });
    expect(content.text).toBe(datasetCsv(ROWS, SEED));
    const lines = (content.text as string).trimEnd().split('\n');
    expect(lines[0]).toBe('index,value');
    expect(lines).toHaveLength(ROWS + 1);
  });

  it('reads the same in the 2026-07-28 era', async () => {
    const read = ok(await modernRequest(stack.url, 'resources/read', { uri: link.uri }, { headers: OWNER }));
    expect(read.contents[0].text).toBe(datasetCsv(ROWS, SEED));
  });

  it('another principal gets exactly the error an unknown URI gets: Resource not found (-32602 with data.uri, as the SDK sends it in every era)', async () => {
    const foreign = rpcError(await legacyRequest(stack.url, 'resources/read', { uri: link.uri }, { headers: STRANGER }));
    const unknownUri = `${link.uri.slice(0, -4)}AAAA`;
    const unknown = rpcError(await legacyRequest(stack.url, 'resources/read', { uri: unknownUri }, { headers: OWNER }));
    expect(foreign).toEqual({ code: -32602, message: 'Resource not found', data: { uri: link.uri } });
    expect(unknown).toEqual({ code: -32602, message: 'Resource not found', data: { uri: unknownUri } });
  });
});

describe('the resources capability', () => {
  it('initialize declares resources', async () => {
    const init = ok(
      await legacyRequest(stack.url, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'large-results', version: '1.0.0' },
      }),
    );
    expect(init.capabilities.resources).toEqual({});
  });

  it('resources/list lists nothing: results are reached through their links', async () => {
    expect(ok(await legacyRequest(stack.url, 'resources/list', {}, { headers: OWNER }))).toMatchObject({ resources: [] });
  });
});
