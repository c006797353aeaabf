/**
 * Resolves a template's intrinsics (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`,
 * `Fn::Split`, `Fn::If` and the conditions, pseudo parameters) with cfn-resolver-lib, given
 * what each `Ref` and `Fn::GetAtt` names. A reference the maps do not know is an error naming
 * the resource that makes it, never a silently unresolved value.
 */
import { createRequire } from 'node:module';
import { AssemblyError } from './assembly-error.ts';

interface NodeEvaluatorInstance {
  evaluateNodes(): Record<string, unknown>;
}
type NodeEvaluatorClass = new (template: unknown, params: Record<string, unknown>) => NodeEvaluatorInstance;
const NodeEvaluator = createRequire(import.meta.url)('cfn-resolver-lib') as NodeEvaluatorClass;

/** Stands for `Ref: AWS::NoValue` until the property that holds it is removed. */
const NO_VALUE = '\u0000AWS::NoValue';
/**
 * cfn-resolver-lib replaces an object of one key whose value is an array by that array
 * (`{ Rules: [...] }` becomes `[...]`), so every such object gets this extra key while it resolves.
 */
const KEEP = '\u0000keep';

export interface ReferenceMaps {
  /** `Ref` targets: pseudo parameters, parameters and logical ids. */
  refs: Record<string, string>;
  /** `Fn::GetAtt` targets: logical id -> attribute -> value. */
  attributes: Record<string, Record<string, string>>;
}

export interface CfnTemplate {
  Parameters?: Record<string, { Default?: unknown; Type?: string }>;
  Conditions?: Record<string, unknown>;
  Mappings?: Record<string, unknown>;
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  Condition?: unknown;
  DependsOn?: unknown;
}

/** The template with every intrinsic resolved; a resource whose condition is false is left out. */
export function resolveTemplate(file: string, template: CfnTemplate, maps: ReferenceMaps): CfnTemplate {
  checkReferences(file, template, maps);
  // The library needs Conditions before Resources, and Fn::Sub only reads its one map, so
  // `${Logical.Attr}` goes in there beside the refs.
  const ordered = protect({
    Parameters: template.Parameters ?? {},
    Conditions: template.Conditions ?? {},
    Mappings: template.Mappings ?? {},
    Resources: template.Resources,
    Outputs: template.Outputs ?? {},
  });
  const subs: Record<string, string> = { ...maps.refs, 'AWS::NoValue': NO_VALUE };
  for (const [id, attributes] of Object.entries(maps.attributes)) for (const [name, value] of Object.entries(attributes)) subs[`${id}.${name}`] = value;
  const warn = console.warn;
  let resolved: Record<string, unknown>;
  // The library warns for every GetAtt it resolves on its own; checkReferences covered them.
  console.warn = () => undefined;
  try {
    resolved = new NodeEvaluator(ordered, { RefResolvers: subs, 'Fn::GetAttResolvers': maps.attributes }).evaluateNodes();
  } catch (error) {
    throw new AssemblyError(file, undefined, `cannot resolve the template's intrinsics: ${(error as Error).message}`);
  } finally {
    console.warn = warn;
  }
  const result = stripNoValue(resolved) as unknown as CfnTemplate;
  for (const [id, resource] of Object.entries(result.Resources)) if (resource.Condition === false) delete result.Resources[id];
  return result;
}

/** Throws naming the first Ref, GetAtt or `${...}` of `Fn::Sub` that the maps cannot answer. */
function checkReferences(file: string, template: CfnTemplate, maps: ReferenceMaps): void {
  const known = (name: string) => Object.hasOwn(maps.refs, name) || name === 'AWS::NoValue';
  const attribute = (id: string, name: string) => maps.attributes[id]?.[name] !== undefined;
  const visit = (value: unknown, where: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, where);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const node = value as Record<string, unknown>;
    if (typeof node.Ref === 'string' && !known(node.Ref))
      throw new AssemblyError(file, where, `Ref to "${node.Ref}", which is neither a resource, a parameter nor a pseudo parameter`);
    const getAtt = node['Fn::GetAtt'];
    if (getAtt !== undefined) {
      const [id, name] = Array.isArray(getAtt) ? getAtt : String(getAtt).split(/\.(.*)/s);
      if (typeof id === 'string' && typeof name === 'string' && !attribute(id, name)) {
        throw new AssemblyError(file, where, `Fn::GetAtt ${id}.${name} names an attribute the local stack does not know`);
      }
    }
    const sub = node['Fn::Sub'];
    if (sub !== undefined) {
      const [text, variables] = Array.isArray(sub) ? (sub as [string, Record<string, unknown>]) : [sub as string, {}];
      for (const [, name = ''] of String(text).matchAll(/\$\{([^}!]+)\}/g)) {
        if (Object.hasOwn(variables ?? {}, name) || known(name)) continue;
        const [id = '', attr] = name.split(/\.(.*)/s);
        if (attr !== undefined && attribute(id, attr)) continue;
        throw new AssemblyError(file, where, `Fn::Sub names \${${name}}, which the local stack cannot resolve`);
      }
    }
    for (const child of Object.values(node)) visit(child, where);
  };
  for (const [id, resource] of Object.entries(template.Resources)) visit(resource.Properties, id);
  for (const [id, output] of Object.entries(template.Outputs ?? {})) visit(output.Value, `output ${id}`);
}

function protect(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(protect);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = protect(item);
  const keys = Object.keys(out);
  const intrinsic = keys.length === 1 && (keys[0] === 'Ref' || keys[0] === 'Condition' || keys[0]?.startsWith('Fn::') === true);
  if (keys.length === 1 && !intrinsic) out[KEEP] = true;
  return out;
}

function stripNoValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== NO_VALUE).map(stripNoValue);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== NO_VALUE && key !== KEEP) out[key] = stripNoValue(item);
  return out;
}
