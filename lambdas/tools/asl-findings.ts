/**
 * asl-validator's findings in the author's terms. It names a machine missing a terminal state
 * by its own counter (`fsm1`, `fsm2`, … in the order its `$..States` walk meets them), and an
 * enum miss with Ajv's "must be equal to one of the allowed values" without the values.
 */

/** One finding as asl-validator returns it. */
export interface AslFinding {
  'Error code'?: string;
  Message?: string;
  schemaError?: { instancePath?: string; schemaPath?: string };
}

/** The values the Amazon States Language allows for the enum fields asl-validator checks, by field name. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  Type: ['Task', 'Pass', 'Choice', 'Wait', 'Succeed', 'Fail', 'Parallel', 'Map'],
  QueryLanguage: ['JSONPath', 'JSONata'],
  Mode: ['INLINE', 'DISTRIBUTED'],
  ExecutionType: ['STANDARD', 'EXPRESS'],
};

/** Each finding as one line, the same line once (the JSONPath and JSONata schemas both refuse a bad QueryLanguage). */
export function aslFindingMessages(findings: readonly AslFinding[], definition: object): string[] {
  const containers = statesContainers(definition);
  const messages = findings.map((finding) => {
    const fsm = /^State machine fsm(\d+) is missing a terminal state$/.exec(finding.Message ?? '');
    if (fsm) {
      const where = containers[Number(fsm[1]) - 1] ?? 'a States object';
      return `${where} has no terminal state (a state with "End": true, or a Succeed or Fail state)`;
    }
    const path = finding.schemaError?.instancePath;
    if (path !== undefined && finding.schemaError?.schemaPath?.endsWith('/enum')) {
      const allowed = ALLOWED[decodeSegment(path.split('/').at(-1) ?? '')];
      const value = JSON.stringify(valueAt(definition, path));
      const [field] = finding.Message?.split(' is invalid.') ?? [path];
      return allowed ? `${field} is ${value}: must be one of ${allowed.join(', ')}` : `${field} is ${value}: not a value the language allows there`;
    }
    return finding.Message ?? JSON.stringify(finding);
  });
  return [...new Set(messages)];
}

/** JSON Pointers of every `States` object, in asl-validator's order: a node's own `States`, then its children depth first. */
function statesContainers(node: unknown, pointer = '', found: string[] = []): string[] {
  if (typeof node !== 'object' || node === null) return found;
  if (!Array.isArray(node) && 'States' in node) found.push(`${pointer}/States`);
  for (const [key, child] of Object.entries(node)) statesContainers(child, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, found);
  return found;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const segment of pointer.split('/').slice(1))
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[decodeSegment(segment)] : undefined;
  return node;
}

function decodeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
