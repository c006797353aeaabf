/**
 * The MCP edge under a seeded, bounded fuzzer (issue 13 §4): random and mutated JSON-RPC
 * bodies of every method of every dialect, against the real handler and core with the
 * repository's tools, judged by edge-oracle.ts. `npm run fuzz -- --cases N --seed S` runs
 * more of the same. The oracle and the shrinker are checked on hand-made answers too, so a
 * green run cannot come from checks that never bite.
 */
import { describe, expect, it } from 'vitest';
import { shrinkCase } from './case-shrinker.ts';
import { formatFuzzReport, generateCase, runEdgeFuzz } from './edge-fuzzer.ts';
import { INTERNAL_FOR_CLIENT_MISTAKE, judge, type Observation } from './edge-oracle.ts';
import type { FuzzCase } from './fuzz-case.ts';
import { createFuzzTarget, legacyHeaders, modernHeaders, modernMeta, parseAnswerMessages, RESULT_MARKER, type TargetAnswer } from './fuzz-target.ts';

/** Fixed, so every run of `npm test` sends the same cases. */
const SEED = 20260728;
const CASES = 2000;

describe('the edge under seeded fuzzing', () => {
  it(`answers ${CASES} random and mutated requests (seed ${SEED}) with no crash, no undocumented 5xx, no wrong code, no record from a rejected call and no argument in the logs`, async () => {
    const report = await runEdgeFuzz({ seed: SEED, cases: CASES });
    // The figures go with a failure (npm run fuzz prints them every time); a green run prints nothing.
    const figures = formatFuzzReport(report);

    expect(
      report.failures.map((f) => ({ case: f.index, label: f.fuzzCase.label, problems: f.problems, minimalBody: f.minimal?.body.slice(0, 400) })),
      figures,
    ).toEqual([]);
    expect(report.failureCount).toBe(0);
    expect(report.cases).toBe(CASES);
    // The checks had something to bite on: requests reached the handlers, started work, carried arguments and were logged about.
    expect(report.byOutcome.result).toBeGreaterThan(CASES / 10);
    expect(report.withMarkers).toBeGreaterThan(CASES / 10);
    expect(report.creatingRecords).toBeGreaterThan(CASES / 50);
    expect(report.withLogs).toBeGreaterThan(CASES / 50);
  });

  it('generates each case from the seed and its index alone, so a failure replays', async () => {
    const target = await createFuzzTarget();
    const cases = (seed: number) => [0, 1, 17, 999].map((index) => generateCase(seed, index, target));
    expect(cases(SEED)).toEqual(cases(SEED));
    expect(cases(SEED).map((c) => c.body)).not.toEqual(cases(SEED + 1).map((c) => c.body));
  });
});

const MARKER = 'mk0123456789ab';
const REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run_test_suite', arguments: { suite: MARKER } } });

function observation(answer: Partial<TargetAnswer>, options: { headers?: Record<string, string>; body?: string; created?: boolean } = {}): Observation {
  const fuzzCase: FuzzCase = {
    label: 'hand-made',
    principal: 'alice',
    headers: options.headers ?? legacyHeaders(),
    body: options.body ?? REQUEST,
    markers: [MARKER],
  };
  return {
    fuzzCase,
    answer: { status: 200, headers: new Headers(), text: '', logs: [], ...answer },
    before: new Set(['a']),
    after: new Set(options.created ? ['a', 'b'] : ['a']),
  };
}
const rpc = (body: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', ...body });

describe('the oracle', () => {
  it('passes a well-formed answer', () => {
    expect(judge(observation({ text: rpc({ id: 7, result: { content: [] } }) }, { created: true })).problems).toEqual([]);
  });

  it.each([
    [
      'an argument value in a log line',
      observation({ text: rpc({ id: 7, result: {} }), logs: [`warn request rejected {"error":"${MARKER}"}`] }),
      'argument value',
    ],
    ['a seeded result in a log line', observation({ text: rpc({ id: 7, result: {} }), logs: [`error x ${RESULT_MARKER}`] }), 'a tool result reached the logs'],
    ['a handler that throws', observation({ thrown: 'TypeError: boom', status: 0 }), 'the handler threw'],
    [
      'a 5xx that is not -32603',
      observation({ status: 502, text: rpc({ id: 7, error: { code: -32602, message: 'x' } }) }),
      'HTTP 502 without the documented -32603',
    ],
    ['an in-band -32603 (no dependency can fail)', observation({ text: rpc({ id: 7, error: { code: -32603, message: 'x' } }) }), INTERNAL_FOR_CLIENT_MISTAKE],
    ['an undocumented code', observation({ text: rpc({ id: 7, error: { code: -32099, message: 'x' } }) }), 'undocumented error code'],
    [
      'a modern -32601 on HTTP 200 (the handler maps it to 404)',
      observation(
        { text: rpc({ id: 7, error: { code: -32601, message: 'x' } }) },
        {
          headers: modernHeaders('tools/call', 'run_test_suite'),
          body: rpc({ id: 7, method: 'tools/call', params: { name: 'run_test_suite', _meta: modernMeta() } }),
        },
      ),
      'error -32601 travelled with HTTP 200',
    ],
    [
      'a rejected call that created a record',
      observation({ text: rpc({ id: 7, error: { code: -32602, message: 'x' } }) }, { created: true }),
      'a rejected call created record(s) b',
    ],
    ['an answer to another id', observation({ text: rpc({ id: 8, result: {} }) }), 'is not the request id'],
    ['a request acknowledged with 202', observation({ status: 202 }), 'acknowledged with 202'],
    [
      'a body over the limit that is not refused with 413',
      observation({ text: rpc({ id: 7, result: {} }) }, { body: rpc({ id: 7, method: 'ping', params: { x: 'x'.repeat(1_100_000) } }) }),
      'not 413',
    ],
  ])('flags %s', (_what, seen, problem) => {
    expect(judge(seen).problems.join('\n')).toContain(problem);
  });
});

describe('the shrinker', () => {
  it('drops every member, item and string tail the failure does not need', async () => {
    const big: FuzzCase = {
      label: 'hand-made',
      principal: 'alice',
      headers: { ...legacyHeaders(), 'mcp-session-id': 'x' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'x'.repeat(50), arguments: { keep: 'BAD', other: [1, 2, 3], more: { a: 'y'.repeat(100) } } },
      }),
      markers: [],
    };
    const minimal = await shrinkCase(big, async (c) => c.body.includes('"BAD"') && c.headers['mcp-session-id'] === 'x');
    expect(minimal.body).toBe('{"params":{"arguments":{"keep":"BAD"}}}');
    expect(minimal.headers).toEqual({ 'mcp-session-id': 'x' });
  });
});

/** One request to a fresh target: the JSON-RPC error it was answered with. */
async function errorOf(headers: Record<string, string>, message: Record<string, unknown>) {
  const target = await createFuzzTarget();
  const answer = await target.send('alice', headers, JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }));
  return parseAnswerMessages(answer.text).find((m) => 'error' in m)?.error as { code: number; message: string } | undefined;
}

/** JSON-RPC 2.0 §5.1: "-32602 Invalid params: Invalid method parameter(s)". */
const INVALID_PARAMS = -32602;

// Found by the fuzzer: methods registered with the SDK's own request schema answered schema-invalid
// params with -32603 and the raw zod issue list (upstream: typescript-sdk issue #2284). The edge now
// answers them -32602 naming the field; initialize is checked against the SDK's schema in request-body-guard.ts.
describe('invalid params of a method registered with the SDK schema are -32602 naming the field, never a raw zod issue list', () => {
  it('resources/read without a uri is "-32602 Invalid params", not an internal error (legacy era)', async () => {
    expect(await errorOf(legacyHeaders(), { method: 'resources/read', params: {} })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('uri'),
    });
  });

  it('resources/read with a number for its uri is "-32602 Invalid params" (2026-07-28)', async () => {
    const params = { uri: 5, _meta: modernMeta() };
    expect(await errorOf(modernHeaders('resources/read'), { method: 'resources/read', params })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('uri'),
    });
  });

  it('tools/list with a number for its cursor is "-32602 Invalid params"', async () => {
    expect(await errorOf(legacyHeaders(), { method: 'tools/list', params: { cursor: 5 } })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('cursor'),
    });
  });

  it('resources/list with a number for its cursor is "-32602 Invalid params"', async () => {
    expect(await errorOf(legacyHeaders(), { method: 'resources/list', params: { cursor: 5 } })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('cursor'),
    });
  });

  it('initialize without a protocolVersion is "-32602 Invalid params"', async () => {
    const params = { capabilities: {}, clientInfo: { name: 'c', version: '1' } };
    expect(await errorOf(legacyHeaders(), { method: 'initialize', params })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('protocolVersion'),
    });
  });

  it('initialize with a string for capabilities.elicitation is "-32602 Invalid params" naming it', async () => {
    const params = { protocolVersion: '2025-06-18', capabilities: { elicitation: 'yes' }, clientInfo: { name: 'c', version: '1' } };
    expect(await errorOf(legacyHeaders(), { method: 'initialize', params })).toMatchObject({
      code: INVALID_PARAMS,
      message: expect.stringContaining('params.capabilities.elicitation'),
    });
  });
});
