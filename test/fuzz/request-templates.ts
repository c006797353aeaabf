/**
 * Valid requests of every method of every dialect, in both eras, as the fuzzer's seeds:
 * tools/list, tools/call (synchronous, Tasks extension, 2025-11-25 `task`, SEP-1391
 * `operation`), tasks/*, tools/async/*, notifications/cancelled, resources/*,
 * server/discover, initialize, ping, the Events extension's events/*, and a client's answers
 * to server requests.
 * Every string argument carries a fresh marker.
 */
import { EXTENSION } from '../../lambdas/mcp/dialects/tasks-2026-07-28.ts';
import { MARKER_PATTERN, type Draft, type GenerationContext } from './fuzz-case.ts';
import { legacyHeaders, modernHeaders, modernMeta, OWNER } from './fuzz-target.ts';

type Template = (ctx: GenerationContext) => Omit<Draft, 'raw'>;

const LRO = { experimental: { longRunningOperations: {} } };
const TASKS_EXT = { extensions: { [EXTENSION]: {} } };
const ELICITATION = { elicitation: { form: {} } };
const LEGACY_VERSIONS = ['2025-11-25', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
const ASYNC_TOOLS = ['run_test_suite', 'summarize_numbers', 'analyze_dataset', 'export_dataset', 'approve_deployment'] as const;

/** Ids come from a small range, so a `notifications/cancelled` often names an earlier call. */
const ID_RANGE = 200;

/** A JSON-RPC id the way clients pick them: numbers mostly, sometimes strings. */
function requestId(ctx: GenerationContext): string | number {
  const n = ctx.rng.int(1, ID_RANGE);
  return ctx.rng.chance(0.7) ? n : `req-${n}`;
}

/**
 * Arguments for `tool` with a marker in every string: valid ones mostly, and now and then
 * with a marker where the schema refuses it (an extra property, a string for a number),
 * so refusals are checked for leaks too.
 */
export function argumentsFor(tool: string, ctx: GenerationContext): Record<string, unknown> {
  const args = validArgumentsFor(tool, ctx);
  const { rng } = ctx;
  if (rng.chance(0.3)) {
    const keys = Object.keys(args);
    if (rng.chance(0.5) || keys.length === 0) args[rng.pick(['note', 'comment', 'suite', 'environment'])] = ctx.marker();
    else args[rng.pick(keys)] = rng.pick([ctx.marker(), [ctx.marker()], { text: ctx.marker() }]);
  }
  return args;
}

function validArgumentsFor(tool: string, ctx: GenerationContext): Record<string, unknown> {
  const { rng } = ctx;
  switch (tool) {
    case 'run_test_suite': {
      const tests = rng.int(1, 50);
      return {
        suite: ctx.marker(),
        tests,
        failures: rng.int(0, tests),
        durationSeconds: rng.int(0, 5),
        ...(rng.chance(0.3) ? { crash: rng.chance(0.5) } : {}),
      };
    }
    case 'quick_calculation':
      return { a: rng.int(-100, 100), b: rng.int(1, 100), op: rng.pick(['add', 'sub', 'mul', 'div']) };
    case 'summarize_numbers':
      return { numbers: Array.from({ length: rng.int(0, 6) }, () => rng.int(-1000, 1000) / 10) };
    case 'analyze_dataset':
    case 'export_dataset':
      return { rows: rng.int(1, 1000), ...(rng.chance(0.5) ? { seed: rng.int(-10, 10) } : {}) };
    case 'approve_deployment':
      return { environment: rng.pick(['staging', 'production', 'dev-1']), changes: Array.from({ length: rng.int(1, 3) }, () => ctx.marker()) };
    default:
      return { value: ctx.marker() };
  }
}

/** The markers a value holds (see `GenerationContext.marker`). */
export function markersIn(value: unknown): string[] {
  const text = JSON.stringify(value) ?? '';
  return [...new Set([...text.matchAll(MARKER_PATTERN)].map((m) => m[0]))];
}

/** A legacy-era draft (the MCP-Protocol-Version header names a 2025 revision, or is absent). */
function legacy(
  ctx: GenerationContext,
  label: string,
  method: string,
  params: Record<string, unknown> | undefined,
  options: { notification?: boolean; version?: string } = {},
): Omit<Draft, 'raw'> {
  const version = options.version ?? ctx.rng.pick(LEGACY_VERSIONS);
  const headers = legacyHeaders(version);
  if (ctx.rng.chance(0.05)) delete headers['mcp-protocol-version'];
  const message = { jsonrpc: '2.0', ...(options.notification ? {} : { id: requestId(ctx) }), method, ...(params === undefined ? {} : { params }) };
  return { label: `legacy ${label}`, principal: OWNER, headers, message, markers: markersIn(params) };
}

/** A 2026-07-28 draft: the envelope in `_meta` and the standard headers naming the method and target. */
function modern(
  ctx: GenerationContext,
  label: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = {},
  options: { notification?: boolean } = {},
): Omit<Draft, 'raw'> {
  const name = [params.name, params.uri, params.taskId].find((v): v is string => typeof v === 'string');
  const message = { jsonrpc: '2.0', ...(options.notification ? {} : { id: requestId(ctx) }), method, params: { ...params, _meta: modernMeta(capabilities) } };
  return { label: `modern ${label}`, principal: OWNER, headers: modernHeaders(method, name), message, markers: markersIn(params) };
}

/** Known ids of a dialect, an unknown one, or another principal's. */
function someTaskId(ctx: GenerationContext, own: readonly string[]): string {
  const { rng, known } = ctx;
  const roll = rng.next();
  if (roll < 0.7) return rng.pick(own);
  if (roll < 0.85) return rng.pick(known.stranger);
  return `unknown-${rng.hex(8)}`;
}

const legacyTaskIds = (ctx: GenerationContext) => Object.values(ctx.known.legacy);
const extTaskIds = (ctx: GenerationContext) => Object.values(ctx.known.ext);
const sepTokens = (ctx: GenerationContext) => Object.values(ctx.known.sep);

function answerMessage(ctx: GenerationContext, id: unknown): Record<string, unknown> {
  const { rng } = ctx;
  if (rng.chance(0.2)) return { jsonrpc: '2.0', id, error: { code: -1, message: 'User rejected' } };
  const action = rng.pick(['accept', 'accept', 'decline', 'cancel']);
  return { jsonrpc: '2.0', id, result: { action, ...(action === 'accept' ? { content: { comment: 'ok' } } : {}) } };
}

/** `tools/call` in every dialect: the requests that carry arguments. */
const CALLS: readonly Template[] = [
  (ctx) => legacy(ctx, 'tools/call sync', 'tools/call', { name: 'quick_calculation', arguments: argumentsFor('quick_calculation', ctx) }),
  (ctx) => legacy(ctx, 'tools/call hybrid', 'tools/call', { name: 'run_test_suite', arguments: argumentsFor('run_test_suite', ctx) }),
  (ctx) => {
    const tool = ctx.rng.pick(ASYNC_TOOLS);
    return legacy(
      ctx,
      'tools/call task',
      'tools/call',
      { name: tool, arguments: argumentsFor(tool, ctx), task: ctx.rng.chance(0.5) ? {} : { ttl: ctx.rng.int(0, 120_000) } },
      { version: '2025-11-25' },
    );
  },
  (ctx) => {
    const tool = ctx.rng.pick(ASYNC_TOOLS);
    const token = ctx.rng.chance(0.8) ? `tok-${ctx.rng.hex(10)}` : ctx.rng.pick(sepTokens(ctx));
    const meta = { 'io.modelcontextprotocol/clientCapabilities': ctx.rng.chance(0.5) ? { ...LRO, ...ELICITATION } : LRO };
    return legacy(ctx, 'tools/call operation', 'tools/call', {
      name: tool,
      arguments: argumentsFor(tool, ctx),
      operation: { token, ...(ctx.rng.chance(0.5) ? { keepAlive: ctx.rng.int(0, 7200) } : {}) },
      _meta: meta,
    });
  },
  (ctx) =>
    modern(
      ctx,
      'tools/call sync',
      'tools/call',
      { name: 'quick_calculation', arguments: argumentsFor('quick_calculation', ctx) },
      ctx.rng.pick([{}, TASKS_EXT]),
    ),
  (ctx) => {
    const tool = ctx.rng.pick(ASYNC_TOOLS);
    return modern(
      ctx,
      'tools/call task',
      'tools/call',
      { name: tool, arguments: argumentsFor(tool, ctx) },
      ctx.rng.chance(0.8) ? { ...TASKS_EXT, ...ELICITATION } : {},
    );
  },
  (ctx) => {
    const tool = ctx.rng.pick(ASYNC_TOOLS);
    return modern(
      ctx,
      'tools/call operation',
      'tools/call',
      { name: tool, arguments: argumentsFor(tool, ctx), operation: { token: `tok-${ctx.rng.hex(10)}` } },
      LRO,
    );
  },
  (ctx) => {
    const tool = ctx.rng.pick(ASYNC_TOOLS);
    return modern(
      ctx,
      'tools/call legacy task',
      'tools/call',
      { name: tool, arguments: argumentsFor(tool, ctx), task: { ttl: 1000 } },
      ctx.rng.pick([{}, TASKS_EXT]),
    );
  },
];

/** Every other method, and the client's answers. */
const OTHERS: readonly Template[] = [
  (ctx) =>
    legacy(ctx, 'initialize', 'initialize', {
      protocolVersion: ctx.rng.pick(LEGACY_VERSIONS),
      capabilities: ctx.rng.pick([{}, ELICITATION, { sampling: {}, roots: {} }]),
      clientInfo: { name: 'edge-fuzz', version: '1.0.0' },
    }),
  (ctx) => legacy(ctx, 'notifications/initialized', 'notifications/initialized', undefined, { notification: true }),
  (ctx) => legacy(ctx, 'ping', 'ping', undefined),
  (ctx) => legacy(ctx, 'tools/list', 'tools/list', ctx.rng.chance(0.5) ? { _meta: { 'io.modelcontextprotocol/clientCapabilities': LRO } } : {}),
  (ctx) => legacy(ctx, 'tasks/get', 'tasks/get', { taskId: someTaskId(ctx, legacyTaskIds(ctx)) }, { version: '2025-11-25' }),
  (ctx) => legacy(ctx, 'tasks/result', 'tasks/result', { taskId: someTaskId(ctx, legacyTaskIds(ctx)) }, { version: '2025-11-25' }),
  (ctx) => legacy(ctx, 'tasks/cancel', 'tasks/cancel', { taskId: someTaskId(ctx, legacyTaskIds(ctx)) }, { version: '2025-11-25' }),
  (ctx) => legacy(ctx, 'tasks/list', 'tasks/list', ctx.rng.chance(0.7) ? {} : { cursor: ctx.rng.hex(16) }, { version: '2025-11-25' }),
  (ctx) => legacy(ctx, 'tools/async/status', 'tools/async/status', { token: someTaskId(ctx, sepTokens(ctx)) }),
  (ctx) => legacy(ctx, 'tools/async/result', 'tools/async/result', { token: someTaskId(ctx, sepTokens(ctx)) }),
  (ctx) =>
    legacy(
      ctx,
      'notifications/cancelled',
      'notifications/cancelled',
      ctx.rng.chance(0.5) ? { requestId: requestId(ctx) } : { requestId: ctx.rng.int(1, 100), _operation: { token: someTaskId(ctx, sepTokens(ctx)) } },
      { notification: true },
    ),
  (ctx) =>
    legacy(ctx, 'resources/read', 'resources/read', {
      uri: ctx.rng.chance(0.7) ? ctx.known.resultUri : `async-mcp://results/${ctx.rng.hex(8)}.${ctx.rng.hex(22)}`,
    }),
  (ctx) => legacy(ctx, 'resources/list', 'resources/list', {}),
  (ctx) => {
    const draft = legacy(ctx, 'client answer', 'unused', undefined);
    draft.message = answerMessage(ctx, ctx.rng.chance(0.8) ? ctx.rng.pick(ctx.known.inputRequestIds) : ctx.rng.int(1, 50));
    return draft;
  },
  (ctx) => modern(ctx, 'server/discover', 'server/discover', {}),
  (ctx) => modern(ctx, 'ping', 'ping', {}),
  (ctx) => modern(ctx, 'tools/list', 'tools/list', {}, ctx.rng.pick([{}, TASKS_EXT, LRO])),
  (ctx) => modern(ctx, 'tasks/get', 'tasks/get', { taskId: someTaskId(ctx, extTaskIds(ctx)) }, TASKS_EXT),
  (ctx) =>
    modern(
      ctx,
      'tasks/update',
      'tasks/update',
      { taskId: someTaskId(ctx, extTaskIds(ctx)), inputResponses: { confirm: { action: 'accept', content: { comment: 'ok' } } } },
      TASKS_EXT,
    ),
  (ctx) => modern(ctx, 'tasks/cancel', 'tasks/cancel', { taskId: someTaskId(ctx, extTaskIds(ctx)) }, ctx.rng.chance(0.9) ? TASKS_EXT : {}),
  (ctx) => modern(ctx, 'tasks/result', 'tasks/result', { taskId: someTaskId(ctx, extTaskIds(ctx)) }, TASKS_EXT),
  (ctx) => modern(ctx, 'tasks/list', 'tasks/list', {}, TASKS_EXT),
  (ctx) => modern(ctx, 'tools/async/status', 'tools/async/status', { token: someTaskId(ctx, sepTokens(ctx)) }, LRO),
  (ctx) => modern(ctx, 'tools/async/result', 'tools/async/result', { token: someTaskId(ctx, sepTokens(ctx)) }, LRO),
  (ctx) => modern(ctx, 'notifications/cancelled', 'notifications/cancelled', { requestId: requestId(ctx) }, {}, { notification: true }),
  (ctx) => modern(ctx, 'resources/read', 'resources/read', { uri: ctx.known.resultUri }),
  (ctx) => {
    const draft = modern(ctx, 'client answer', 'unused', {});
    delete draft.headers['mcp-method'];
    draft.message = answerMessage(ctx, ctx.rng.pick(ctx.known.inputRequestIds));
    return draft;
  },
];

const EVENT_NAMES = ['operation.finished', 'operation.input_required', 'operation.progress'] as const;
const EVENTS_EXT = { extensions: { 'io.modelcontextprotocol/events': {} } };

/** A subscription as poll, stream and subscribe name it: an event, arguments (an operation of any kind), a cursor. */
function eventSubscription(ctx: GenerationContext): Record<string, unknown> {
  const { rng } = ctx;
  const operationId = someTaskId(ctx, [...extTaskIds(ctx), ...sepTokens(ctx), ...legacyTaskIds(ctx)]);
  const args = rng.pick([{}, { operationId }, { tool: rng.pick(ASYNC_TOOLS) }, { operationId, tool: rng.pick(ASYNC_TOOLS) }, { marker: ctx.marker() }]);
  return {
    name: rng.chance(0.9) ? rng.pick(EVENT_NAMES) : ctx.marker(),
    arguments: args,
    cursor: rng.chance(0.7) ? null : rng.pick([ctx.marker(), 'eyJ2IjoxLCJwIjoiMDAwMDAwMDAwMDAwMDAwIyJ9']),
    ...(rng.chance(0.3) ? { maxAgeMs: rng.int(0, 600_000) } : {}),
  };
}

/** The Events extension's methods (SEP-3415), in the era that has them and in one that does not. */
const EVENTS: readonly Template[] = [
  (ctx) => modern(ctx, 'events/list', 'events/list', ctx.rng.chance(0.8) ? {} : { cursor: ctx.marker() }, ctx.rng.pick([{}, EVENTS_EXT])),
  (ctx) => modern(ctx, 'events/poll', 'events/poll', { ...eventSubscription(ctx), ...(ctx.rng.chance(0.3) ? { maxEvents: ctx.rng.int(1, 200) } : {}) }),
  (ctx) => modern(ctx, 'events/stream', 'events/stream', eventSubscription(ctx)),
  (ctx) =>
    modern(ctx, 'events/subscribe', 'events/subscribe', {
      ...eventSubscription(ctx),
      delivery: {
        mode: 'webhook',
        url: `http://127.0.0.1:9/${ctx.marker()}`,
        secret: ctx.rng.chance(0.5) ? `whsec_${ctx.marker()}` : 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
      },
      ...(ctx.rng.chance(0.3) ? { ttlMs: ctx.rng.pick([null, ctx.rng.int(1, 90_000_000)]) } : {}),
    }),
  (ctx) =>
    modern(ctx, 'events/unsubscribe', 'events/unsubscribe', {
      name: ctx.rng.pick(EVENT_NAMES),
      arguments: {},
      delivery: { url: `http://127.0.0.1:9/${ctx.marker()}` },
    }),
  (ctx) => legacy(ctx, 'events/poll', 'events/poll', eventSubscription(ctx), { version: '2025-11-25' }),
];

/** A valid request from a template chosen at random. */
export function validDraft(ctx: GenerationContext): Draft {
  // Calls weigh more: they carry the arguments whose values must stay out of the logs.
  const draft = ctx.rng.pick(ctx.rng.chance(0.35) ? CALLS : [...CALLS, ...OTHERS, ...EVENTS])(ctx);
  // Templates share constant capability objects: mutations must only ever touch a copy.
  return { ...draft, message: structuredClone(draft.message), raw: [] };
}
