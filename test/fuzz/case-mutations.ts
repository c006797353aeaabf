/**
 * Mutations of a valid draft: wrong types in every param, dropped and added fields, huge
 * strings, deep nesting, unicode, NUL bytes, lone surrogates, numbers JSON.stringify cannot
 * write (1e309, -0), odd ids and tokens, header/body mismatches in both eras, swapped
 * methods, batches and corrupted text.
 */
import { finalizeDraft, type Draft, type GenerationContext } from './fuzz-case.ts';
import { MODERN, modernMeta } from './fuzz-target.ts';
import { markersIn } from './request-templates.ts';

type Path = Array<string | number>;
/** Applies itself to the draft and returns its label, or `undefined` when it does not apply. */
type Mutation = (draft: Draft, ctx: GenerationContext) => string | undefined;

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'tasks/result',
  'tasks/list',
  'tools/async/status',
  'tools/async/result',
  'notifications/cancelled',
  'notifications/initialized',
  'resources/read',
  'resources/list',
  'server/discover',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'tools/cal',
  'Tools/List',
  '',
  'rpc.discover',
  'notifications/unknown',
  'tasks/get/',
  'x'.repeat(1000),
];
const RAW_NUMBERS = ['1e309', '-1e309', '-0', '1e-400', '9007199254740993', '0.1', '1E2', '-0.0', '123456789012345678901234567890'];
const WEIRD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud800y',
  '\ud83d\ude00',
  '\u202e',
  '\ufeff',
  '\u2028\u2029',
  'é',
  'Ünïcødé ✓',
  '\ud835\udcc4',
  '../../etc/passwd',
  '%00',
  '{"a":1}',
  '<script>',
  "'; DROP TABLE",
  '\\',
  '"',
  'NaN',
  'Infinity',
  '-0',
];
const FIELD_NAMES = [
  '_meta',
  'task',
  'operation',
  'arguments',
  'name',
  'cursor',
  'inputResponses',
  'requestState',
  '_operation',
  'token',
  'taskId',
  'uri',
  '__proto__',
  'constructor',
  'x',
];
const VERSIONS = [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', 'garbage', '', '2026-07-28, 2025-11-25', '2027-01-01'];

/** A raw JSON token at this place in the text (see `Draft.raw`). */
function raw(draft: Draft, ctx: GenerationContext, token: string): string {
  const sentinel = `__raw_${draft.raw.length}_${ctx.rng.hex(8)}__`;
  draft.raw.push([sentinel, token]);
  return sentinel;
}

/** A value of any JSON type, often carrying a marker. */
function oddValue(draft: Draft, ctx: GenerationContext): unknown {
  const { rng } = ctx;
  const marker = ctx.marker();
  return rng.pick<() => unknown>([
    () => null,
    () => true,
    () => false,
    () => 0,
    () => -1,
    () => 1.5,
    () => 2 ** 53 + 2,
    () => '',
    () => marker,
    () => [],
    () => [marker],
    () => ({}),
    () => ({ x: marker }),
    () => `${rng.pick(WEIRD_STRINGS)}${marker}`,
    () => raw(draft, ctx, rng.pick(RAW_NUMBERS)),
  ])();
}

function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (out.length > 300 || prefix.length > 8) return out;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      out.push([...prefix, i]);
      pathsOf(item, [...prefix, i], out);
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push([...prefix, key]);
      pathsOf(item, [...prefix, key], out);
    }
  }
  return out;
}

function valueAt(root: unknown, path: Path): unknown {
  const key = path.at(-1);
  return key === undefined ? root : parentOf(root, path)?.[key];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | undefined {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>) : undefined;
}

/** Sets an own property, `__proto__` included (plain assignment would set the prototype). */
function setAt(root: unknown, path: Path, value: unknown): void {
  const parent = parentOf(root, path);
  const key = path.at(-1);
  if (parent && key !== undefined) Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

function deleteAt(root: unknown, path: Path): void {
  const parent = parentOf(root, path);
  if (!parent) return;
  const key = path.at(-1);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (key !== undefined) delete parent[key];
}

const show = (path: Path) => path.map(String).join('.');
const message = (draft: Draft) => (draft.message !== null && typeof draft.message === 'object' ? (draft.message as Record<string, unknown>) : undefined);

/** Paths under `params` (or a client answer's `result` and `error`), where a wrong type matters most. */
function paramPaths(draft: Draft): Path[] {
  const m = message(draft);
  const paths = ['params', 'result', 'error'].flatMap((key) => (m && key in m ? [[key], ...pathsOf(m[key], [key])] : []));
  return paths.filter((p) => p[1] !== '_meta' || p.length <= 3);
}

/** A case's text is final from here on: text mutations work on it. */
function textOf(draft: Draft): string {
  draft.text ??= finalizeDraft(draft).body;
  return draft.text;
}

const MUTATIONS = {
  wrongType(draft, ctx) {
    const paths = paramPaths(draft);
    if (paths.length === 0 || draft.text !== undefined) return undefined;
    const path = ctx.rng.pick(paths);
    setAt(draft.message, path, oddValue(draft, ctx));
    return `wrong-type ${show(path)}`;
  },
  drop(draft, ctx) {
    const paths = pathsOf(draft.message);
    if (paths.length === 0 || draft.text !== undefined) return undefined;
    const path = ctx.rng.pick(paths);
    deleteAt(draft.message, path);
    return `drop ${show(path)}`;
  },
  add(draft, ctx) {
    const objects = [[], ...pathsOf(draft.message)].filter((p) => isPlainObject(valueAt(draft.message, p)));
    if (objects.length === 0 || draft.text !== undefined) return undefined;
    const path = [...ctx.rng.pick(objects), ctx.rng.pick(FIELD_NAMES)];
    setAt(draft.message, path, oddValue(draft, ctx));
    return `add ${show(path)}`;
  },
  hugeString(draft, ctx) {
    const paths = paramPaths(draft);
    if (paths.length === 0 || draft.text !== undefined) return undefined;
    const { rng } = ctx;
    // Mostly large; now and then right at or past the 1 MB body limit.
    const size = rng.chance(0.03) ? rng.pick([1_048_000, 1_048_576, 1_100_000]) : rng.pick([1_000, 10_000, 65_536, 100_000, 300_000]);
    const path = rng.pick(paths);
    // [character, bytes it takes in the JSON text]
    const [char, bytes] = rng.pick([
      ['x', 1],
      ['é', 2],
      ['\u0000', 6],
      ['\ud83d\ude00', 4],
    ] as const);
    setAt(draft.message, path, `${ctx.marker()}${char.repeat(Math.ceil(size / bytes))}`);
    return `huge-string ${show(path)} ~${size}`;
  },
  deepNesting(draft, ctx) {
    const paths = paramPaths(draft);
    if (draft.text !== undefined) return undefined;
    const { rng } = ctx;
    const depth = rng.pick([8, 32, 62, 63, 64, 65, 100, 1000, 20_000]);
    const object = rng.chance(0.5);
    const token = object ? `${'{"a":'.repeat(depth)}"${ctx.marker()}"${'}'.repeat(depth)}` : `${'['.repeat(depth)}"${ctx.marker()}"${']'.repeat(depth)}`;
    const path = paths.length === 0 ? ['params'] : rng.pick(paths);
    setAt(draft.message, path, raw(draft, ctx, token));
    return `deep-nesting ${show(path)} ${depth}`;
  },
  weirdString(draft, ctx) {
    const strings = pathsOf(draft.message).filter((p) => typeof valueAt(draft.message, p) === 'string');
    if (strings.length === 0 || draft.text !== undefined) return undefined;
    const path = ctx.rng.pick(strings);
    const weird = ctx.rng.pick(WEIRD_STRINGS);
    setAt(draft.message, path, ctx.rng.chance(0.5) ? weird : `${weird}${ctx.marker()}${weird}`);
    return `weird-string ${show(path)} ${JSON.stringify(weird)}`;
  },
  oddNumber(draft, ctx) {
    const paths = paramPaths(draft);
    if (draft.text !== undefined) return undefined;
    const path = paths.length === 0 || ctx.rng.chance(0.2) ? ['id'] : ctx.rng.pick(paths);
    const token = ctx.rng.pick(RAW_NUMBERS);
    setAt(draft.message, path, raw(draft, ctx, token));
    return `odd-number ${show(path)} ${token}`;
  },
  oddId(draft, ctx) {
    const m = message(draft);
    if (!m || draft.text !== undefined) return undefined;
    const { rng } = ctx;
    const choice = rng.int(0, 19);
    const values: unknown[] = [
      '',
      'x'.repeat(10_000),
      'x'.repeat(256),
      'x'.repeat(257),
      'ünï-ïd',
      {},
      { a: 1 },
      [],
      [1],
      null,
      1.5,
      true,
      0,
      -1,
      2 ** 53,
      'asyncmcp-input:garbage',
      rng.pick(ctx.known.inputRequestIds),
    ];
    if (choice >= values.length) {
      const token = rng.pick(['-0', '1e309', '1e-400']);
      m.id = raw(draft, ctx, token);
      return `odd-id ${token}`;
    }
    if (choice === 0 && rng.chance(0.5)) {
      delete m.id;
      return 'odd-id absent';
    }
    m.id = values[choice];
    return `odd-id ${JSON.stringify(values[choice])?.slice(0, 20)}`;
  },
  oddToken(draft, ctx) {
    const m = message(draft);
    if (!m || draft.text !== undefined || m.params === null || typeof m.params !== 'object') return undefined;
    const { rng, known } = ctx;
    const fields = pathsOf(m.params, ['params']).filter((p) => ['token', 'taskId', 'uri', 'cursor'].includes(String(p.at(-1))));
    const path = fields.length > 0 ? rng.pick(fields) : ['params', rng.pick(['token', 'taskId', 'uri', 'cursor'])];
    const values: unknown[] = [
      '',
      'x'.repeat(10_240),
      'x'.repeat(256),
      'x'.repeat(257),
      'x'.repeat(1001),
      'ü-tâsk-✓',
      '\u0000',
      '\ud800',
      {},
      null,
      1.5,
      7,
      [],
      ...known.stranger,
      ...Object.values(known.sep),
      ...Object.values(known.ext),
      ...Object.values(known.legacy),
      known.resultUri,
      `${known.resultUri}x`,
      'async-mcp://results/',
      'async-mcp://results/..%2f..%2fsecret',
    ];
    const value = rng.pick(values);
    setAt(m, path, value);
    return `odd-token ${show(path)} ${JSON.stringify(value)?.slice(0, 24)}`;
  },
  header(draft, ctx) {
    const { rng } = ctx;
    const m = message(draft);
    const name = rng.pick(['mcp-method', 'mcp-name', 'mcp-protocol-version', 'mcp-session-id', 'content-type', 'accept', 'mcp-param-x']);
    const values: Record<string, unknown[]> = {
      'mcp-method': [undefined, ...METHODS.slice(0, 20), 'TOOLS/LIST', 'é', typeof m?.method === 'string' ? `${m.method} ` : 'x'],
      'mcp-name': [
        undefined,
        '',
        'quick_calculation',
        'run_test_suite',
        'x'.repeat(5000),
        'ünï',
        '=?base64?cnVuX3Rlc3Rfc3VpdGU=?=',
        '=?base64?!!?=',
        ...ctx.known.stranger,
      ],
      'mcp-protocol-version': [undefined, ...VERSIONS],
      'mcp-session-id': ['garbage', 's1.x.y', 'x'.repeat(3000), 's1..', ctx.known.sessionIds.own, ctx.known.sessionIds.own, ctx.known.sessionIds.stranger],
      'content-type': [undefined, 'text/plain', 'application/json; charset=latin1', 'application/jsonx'],
      accept: [undefined, 'application/json', 'text/event-stream', '*/*', 'text/html'],
      'mcp-param-x': ['=?base64?Zm9v?=', '=?base64?!!?=', 'plain'],
    };
    const value = rng.pick(values[name] ?? [undefined]) as string | undefined;
    if (value === undefined) delete draft.headers[name];
    else draft.headers[name] = value;
    return `header ${name}=${JSON.stringify(value)?.slice(0, 24) ?? 'absent'}`;
  },
  eraSwap(draft, ctx) {
    const m = message(draft);
    if (!m || draft.text !== undefined) return undefined;
    if (m.params === null || typeof m.params !== 'object') m.params = {};
    const params = m.params as Record<string, unknown>;
    const isModern = draft.headers['mcp-protocol-version'] === MODERN;
    const { rng } = ctx;
    if (isModern) {
      if (rng.chance(0.5)) {
        delete params._meta;
        return 'era-swap modern headers, no envelope';
      }
      draft.headers['mcp-protocol-version'] = '2025-11-25';
      return 'era-swap envelope with a legacy header';
    }
    params._meta = { ...(params._meta as object | undefined), ...modernMeta(rng.pick([{}, { extensions: { 'io.modelcontextprotocol/tasks': {} } }])) };
    if (rng.chance(0.5)) draft.headers['mcp-protocol-version'] = MODERN;
    return 'era-swap legacy body with the envelope';
  },
  methodSwap(draft, ctx) {
    const m = message(draft);
    if (!m || draft.text !== undefined) return undefined;
    m.method = ctx.rng.pick(METHODS);
    if (ctx.rng.chance(0.5) && draft.headers['mcp-method'] !== undefined) draft.headers['mcp-method'] = String(m.method).slice(0, 200);
    return `method-swap ${String(m.method).slice(0, 24)}`;
  },
  batch(draft, ctx) {
    if (draft.text !== undefined || Array.isArray(draft.message)) return undefined;
    const { rng } = ctx;
    const size = rng.pick([0, 1, 2, 10, 11, 12]);
    draft.message = Array.from({ length: size }, (_, i) => (i === 0 ? draft.message : structuredClone(draft.message)));
    if (rng.chance(0.5)) draft.headers['mcp-protocol-version'] = '2025-03-26';
    return `batch of ${size}`;
  },
  capabilities(draft, ctx) {
    const m = message(draft);
    if (!m || draft.text !== undefined || m.params === null || typeof m.params !== 'object') return undefined;
    const params = m.params as Record<string, unknown>;
    if (params._meta === null || typeof params._meta !== 'object') params._meta = {};
    const meta = params._meta as Record<string, unknown>;
    const odd = ctx.rng.pick<unknown>([
      null,
      'x',
      [],
      7,
      { extensions: null },
      { extensions: { 'io.modelcontextprotocol/tasks': 'yes' } },
      { experimental: 5 },
      { elicitation: [] },
      { experimental: { longRunningOperations: null } },
    ]);
    meta['io.modelcontextprotocol/clientCapabilities'] = odd;
    return `capabilities ${JSON.stringify(odd)}`;
  },
  corruptText(draft, ctx) {
    const { rng } = ctx;
    const text = textOf(draft);
    const at = rng.int(0, text.length);
    const how = rng.int(0, 9);
    const edits: Array<[string, () => string]> = [
      ['truncate', () => text.slice(0, at)],
      ['insert-nul', () => `${text.slice(0, at)}\u0000${text.slice(at)}`],
      ['insert', () => `${text.slice(0, at)}${rng.pick(['{', '}', '"', ',', '\\', 'x', ']'])}${text.slice(at)}`],
      ['replace', () => `${text.slice(0, at)}${rng.pick(['"', '{', ' ', '\u00ff'])}${text.slice(at + 1)}`],
      ['append', () => `${text}${rng.pick(['}', ' garbage', '\n{"jsonrpc":"2.0"}', '\u0000'])}`],
      ['empty', () => ''],
      ['scalar', () => rng.pick(['null', '[]', '123', '"str"', 'true', '{}'])],
      ['bom', () => `\ufeff${text}`],
      ['duplicate-key', () => text.replace(/^\{/, `{"method":"ping","id":${rng.int(1, 9)},`)],
      ['lone-surrogate-escape', () => text.replace(/"(mk[0-9a-f]{12})"/, '"\\ud800$1"')],
    ];
    const picked = edits[how];
    if (!picked) return undefined;
    const [label, edit] = picked;
    draft.text = edit();
    return `corrupt-text ${label}`;
  },
} satisfies Record<string, Mutation>;

type MutationName = keyof typeof MUTATIONS;

/**
 * How often each mutation is picked: the ones that keep a request servable weigh more, so
 * most cases reach the handlers instead of stopping at the transport's first check.
 */
const WEIGHTS: Record<MutationName, number> = {
  wrongType: 6,
  drop: 3,
  add: 3,
  hugeString: 2,
  deepNesting: 1,
  weirdString: 4,
  oddNumber: 2,
  oddId: 2,
  oddToken: 6,
  header: 2,
  eraSwap: 1,
  methodSwap: 2,
  batch: 1,
  capabilities: 1,
  corruptText: 1,
};
const WEIGHTED = (Object.entries(WEIGHTS) as Array<[MutationName, number]>).flatMap(([name, weight]) => Array<MutationName>(weight).fill(name));

/** Applies 0 to 3 random mutations (mostly one); the draft's label grows with each. */
export function mutateDraft(draft: Draft, ctx: GenerationContext): Draft {
  const { rng } = ctx;
  const count = rng.pick([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]);
  for (let i = 0; i < count; i++) {
    const mutate: Mutation = MUTATIONS[rng.pick(WEIGHTED)];
    const label = mutate(draft, ctx);
    if (label) draft.label += ` + ${label}`;
  }
  draft.markers = argumentMarkers(draft);
  return draft;
}

/**
 * The markers inside tool arguments after mutation (raw tokens placed there included): the
 * values that must never reach a log. Markers elsewhere (ids, tokens) are not arguments.
 */
function argumentMarkers(draft: Draft): string[] {
  const messages = Array.isArray(draft.message) ? draft.message : [draft.message];
  const found = new Set<string>();
  for (const m of messages) {
    const params = isPlainObject(m) ? m.params : undefined;
    if (!isPlainObject(params) || params.arguments === undefined) continue;
    const text = JSON.stringify(params.arguments) ?? '';
    for (const marker of markersIn(text)) found.add(marker);
    for (const [sentinel, token] of draft.raw) if (text.includes(sentinel)) for (const marker of markersIn(token)) found.add(marker);
  }
  return [...found];
}
