/**
 * SEP-2243 `x-mcp-header` declarations in a tool's inputSchema (2026-07-28 Streamable HTTP,
 * "Custom Headers from Tool Parameters"). A property that carries `x-mcp-header: "Region"`
 * is mirrored by clients into an `Mcp-Param-Region` header, which the server checks
 * against the body. Declarations are checked when a tool folder loads, because clients
 * "MUST reject" (leave out) a tool whose declarations break these rules.
 */
import { isObject } from '../shared/json-values.ts';

export const X_MCP_HEADER = 'x-mcp-header';

export interface HeaderDeclaration {
  /** Property names from the arguments object down to the value. */
  path: readonly string[];
  /** The name after `Mcp-Param-`, as declared. */
  headerName: string;
  type: 'string' | 'integer' | 'boolean';
}

export type HeaderDeclarations = { ok: true; declarations: HeaderDeclaration[] } | { ok: false; problem: string };

/** RFC 9110 §5.1 `token`: no spaces, control characters or delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** "The property MUST be a primitive type": `number` is not allowed, only these. */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/**
 * Subschemas a `properties` chain does not pass through: an annotation "anywhere else makes
 * the tool definition invalid".
 */
const ELSEWHERE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;
const MAP_VALUED = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

const cache = new WeakMap<object, HeaderDeclarations>();

/** The declarations of `inputSchema`, or the first rule one of them breaks. Cached per schema object. */
export function headerDeclarationsOf(inputSchema: Record<string, unknown>): HeaderDeclarations {
  let found = cache.get(inputSchema);
  if (!found) {
    found = scan(inputSchema);
    cache.set(inputSchema, found);
  }
  return found;
}

function scan(inputSchema: Record<string, unknown>): HeaderDeclarations {
  const declarations: HeaderDeclaration[] = [];
  const seen = new Map<string, string>();

  const visit = (node: unknown, path: string[], onChain: boolean): string | undefined => {
    if (!isObject(node)) return undefined;
    if (X_MCP_HEADER in node) {
      const where = path.length ? path.join('.') : 'the root schema';
      if (!onChain || path.length === 0) {
        return `${where}: ${X_MCP_HEADER} is only allowed on a property reached through "properties" alone (not under items, $defs, allOf/anyOf/oneOf, if/then/else…)`;
      }
      const name = node[X_MCP_HEADER];
      if (typeof name !== 'string' || name === '') return `${where}: ${X_MCP_HEADER} must be a non-empty string`;
      if (!TOKEN.test(name)) return `${where}: ${X_MCP_HEADER} "${name}" must be an HTTP token (no spaces, control characters or delimiters)`;
      const type = node.type;
      if (typeof type !== 'string' || !HEADER_TYPES.has(type)) {
        return `${where}: ${X_MCP_HEADER} is only allowed on a string, integer or boolean property, not ${JSON.stringify(type ?? 'untyped')}`;
      }
      const earlier = seen.get(name.toLowerCase());
      if (earlier !== undefined) return `${X_MCP_HEADER} "${name}" is declared twice (header names ignore case: "${earlier}")`;
      seen.set(name.toLowerCase(), name);
      declarations.push({ path, headerName: name, type: type as HeaderDeclaration['type'] });
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const problem = visit(child, [...path, key], onChain);
        if (problem) return problem;
      }
    }
    for (const keyword of ELSEWHERE) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : MAP_VALUED.has(keyword) && isObject(sub) ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const problem = visit(branch, [...path, `<${keyword}>`], false);
        if (problem) return problem;
      }
    }
    return undefined;
  };

  const problem = visit(inputSchema, [], true);
  return problem ? { ok: false, problem } : { ok: true, declarations };
}
