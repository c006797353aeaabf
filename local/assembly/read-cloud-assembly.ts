/**
 * Reads a cloud assembly (`cdk synth -o DIR`): manifest.json names the stacks, each stack's
 * template names its resources, and each `AWS::CloudFormation::Stack` whose `aws:asset:path`
 * names a `*.nested.template.json` is read as a nested stack with the parameters its parent
 * passes. Every resource is named as CloudFormation would and every intrinsic resolved; the
 * result is one flat list of resources, nested stacks' included, and the top stack's outputs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AssemblyError } from './assembly-error.ts';
import { ACCOUNT_ID, nameProperty, REGION, resourceIdentity, stackArn, type ResourceIdentity } from './physical-names.ts';
import { resolveTemplate, type CfnResource, type CfnTemplate, type ReferenceMaps } from './resolve-template.ts';

/** One resource of the assembly, resolved. */
export interface AssemblyResource {
  logicalId: string;
  type: string;
  /** The stack (top or nested) that holds it. */
  stackName: string;
  /** Its template, relative to the assembly directory. */
  templateFile: string;
  identity: ResourceIdentity;
  properties: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface ReadAssembly {
  directory: string;
  stackName: string;
  resources: AssemblyResource[];
  outputs: Record<string, string>;
}

interface Manifest {
  artifacts?: Record<string, { type: string; properties?: { templateFile?: string }; displayName?: string }>;
}

/** Reads the one stack of the assembly in `directory` (or the one named `stackName`). */
export function readCloudAssembly(directory: string, stackName?: string): ReadAssembly {
  const dir = resolve(directory);
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(manifestFile))
    throw new AssemblyError(manifestFile, undefined, 'not found: is this a cloud assembly (the folder `cdk synth -o DIR` writes)?');
  const manifest = readJson<Manifest>(manifestFile);
  const stacks = Object.entries(manifest.artifacts ?? {}).filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack');
  const chosen = stackName ? stacks.filter(([id]) => id === stackName) : stacks;
  const [only] = chosen;
  if (only === undefined || chosen.length !== 1) {
    const names = stacks.map(([id]) => id).join(', ') || 'none';
    throw new AssemblyError(manifestFile, undefined, stackName ? `no stack named ${stackName} (stacks: ${names})` : `expected one stack, found ${names}`);
  }
  const [id, artifact] = only;
  const templateFile = artifact.properties?.templateFile;
  if (!templateFile) throw new AssemblyError(manifestFile, id, 'the stack names no templateFile');
  const resources: AssemblyResource[] = [];
  const outputs = readStack(dir, templateFile, id, {}, resources);
  return { directory: dir, stackName: id, resources, outputs };
}

/** Reads one template (and its nested stacks, depth first) into `into`; returns its outputs. */
function readStack(dir: string, templateFile: string, stackName: string, parameters: Record<string, string>, into: AssemblyResource[]): Record<string, string> {
  const file = join(dir, templateFile);
  if (!existsSync(file)) throw new AssemblyError(file, undefined, 'the template is missing from the assembly');
  const template = readJson<CfnTemplate>(file);
  if (!template.Resources || typeof template.Resources !== 'object') throw new AssemblyError(templateFile, undefined, 'the template has no Resources');
  const maps = initialMaps(templateFile, template, stackName, parameters);
  const identities = nameResources(templateFile, template, stackName, maps);
  const identityOf = (logicalId: string) => {
    const identity = identities[logicalId];
    if (!identity) throw new AssemblyError(templateFile, logicalId, 'a resource the stack did not name');
    return identity;
  };

  // Nested stacks in an order where each one's parameters only read stacks already read.
  const nested = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack');
  const pending = new Map(nested);
  while (pending.size > 0) {
    const ready = [...pending].find(([, r]) => nestedReferences(r.Properties?.Parameters, pending).length === 0);
    if (!ready) throw new AssemblyError(templateFile, [...pending.keys()][0], 'nested stacks whose parameters read each other in a cycle');
    const [logicalId, resource] = ready;
    pending.delete(logicalId);
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (typeof assetPath !== 'string' || !assetPath.endsWith('.nested.template.json')) {
      throw new AssemblyError(
        templateFile,
        logicalId,
        'a nested stack without aws:asset:path metadata naming its *.nested.template.json cannot be read from the assembly',
      );
    }
    const passed = resolveTemplate(
      templateFile,
      {
        Parameters: template.Parameters,
        Conditions: template.Conditions,
        Resources: { [logicalId]: { Type: resource.Type, Properties: { Parameters: resource.Properties?.Parameters ?? {} } } },
      },
      maps,
    );
    const values = stringValues(templateFile, logicalId, (passed.Resources[logicalId]?.Properties?.Parameters ?? {}) as Record<string, unknown>);
    const childOutputs = readStack(dir, assetPath, identityOf(logicalId).name, values, into);
    const attributes = maps.attributes[logicalId] ?? {};
    maps.attributes[logicalId] = attributes;
    for (const [key, value] of Object.entries(childOutputs)) attributes[`Outputs.${key}`] = value;
  }

  const resolved = resolveTemplate(templateFile, template, maps);
  for (const [logicalId, resource] of Object.entries(resolved.Resources)) {
    if (resource.Type === 'AWS::CDK::Metadata') continue;
    into.push({
      logicalId,
      type: resource.Type,
      stackName,
      templateFile,
      identity: identityOf(logicalId),
      properties: resource.Properties ?? {},
      metadata: resource.Metadata ?? {},
    });
  }
  const outputs: Record<string, string> = {};
  for (const [key, output] of Object.entries(resolved.Outputs ?? {})) {
    outputs[key] = typeof output.Value === 'string' ? output.Value : JSON.stringify(output.Value);
  }
  return outputs;
}

function initialMaps(file: string, template: CfnTemplate, stackName: string, parameters: Record<string, string>): ReferenceMaps {
  const refs: Record<string, string> = {
    'AWS::AccountId': ACCOUNT_ID,
    'AWS::Region': REGION,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stackName,
    'AWS::StackId': stackArn(stackName),
    'AWS::NotificationARNs': '',
  };
  for (const [name, parameter] of Object.entries(template.Parameters ?? {})) {
    const passed = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    if (passed !== undefined) refs[name] = passed;
    // CDK's bootstrap version parameter is an SSM lookup; its value does not matter locally.
    else if (parameter.Type?.startsWith('AWS::SSM::Parameter::Value')) refs[name] = '6';
    else if (parameter.Default !== undefined) refs[name] = String(parameter.Default);
    else throw new AssemblyError(file, undefined, `parameter ${name} has no value: the parent stack passes none and it has no Default`);
  }
  return { refs, attributes: {} };
}

/** Gives every resource its identity, filling in the maps; versions are numbered per function. */
function nameResources(file: string, template: CfnTemplate, stackName: string, maps: ReferenceMaps): Record<string, ResourceIdentity> {
  const identities: Record<string, ResourceIdentity> = {};
  const entries = Object.entries(template.Resources);
  // Functions first: versions, aliases and URLs name the function they belong to.
  const order = (r: CfnResource) => (r.Type === 'AWS::Lambda::Function' ? 0 : r.Type === 'AWS::Lambda::Version' ? 1 : r.Type === 'AWS::Lambda::Alias' ? 2 : 1);
  const sorted = [...entries].sort(([a, ra], [b, rb]) => order(ra) - order(rb) || a.localeCompare(b));
  const versionCount = new Map<string, number>();
  const functionArnOf = (reference: unknown): string | undefined => {
    const value = resolveSmall(file, reference, maps);
    if (typeof value !== 'string') return undefined;
    return value.startsWith('arn:') ? value : `arn:aws:lambda:${REGION}:${ACCOUNT_ID}:function:${value}`;
  };
  for (const [logicalId, resource] of sorted) {
    const properties = resource.Properties ?? {};
    const nameKey = nameProperty(resource.Type);
    const explicit = nameKey && properties[nameKey] !== undefined ? resolveSmall(file, properties[nameKey], maps, logicalId) : undefined;
    if (explicit !== undefined && typeof explicit !== 'string') throw new AssemblyError(file, logicalId, `${nameKey} must resolve to a string`);
    const identity = resourceIdentity(resource.Type, stackName, logicalId, explicit, functionArnOf, properties);
    if (resource.Type === 'AWS::Lambda::Version') {
      const target = identity.attributes.FunctionArn;
      if (target === undefined) throw new AssemblyError(file, logicalId, 'a version whose FunctionName does not resolve');
      const number = (versionCount.get(target) ?? 0) + 1;
      versionCount.set(target, number);
      identity.ref = `${target}:${number}`;
      identity.attributes.Version = String(number);
    } else if (resource.Type === 'AWS::Lambda::Alias') {
      const alias = resolveSmall(file, properties.Name, maps, logicalId);
      identity.ref = `${identity.attributes.FunctionArn}:${String(alias)}`;
      identity.attributes.AliasArn = identity.ref;
    }
    identities[logicalId] = identity;
    maps.refs[logicalId] = identity.ref;
    maps.attributes[logicalId] = identity.attributes;
  }
  return identities;
}

/** Resolves one value with the maps known so far (names, versions' functions, parameters). */
function resolveSmall(file: string, value: unknown, maps: ReferenceMaps, logicalId?: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  const key = logicalId ?? 'Value';
  const resolved = resolveTemplate(file, { Resources: { [key]: { Type: 'Local::Value', Properties: { Value: value } } } }, maps);
  return resolved.Resources[key]?.Properties?.Value;
}

/** Logical ids of the still-unread nested stacks that `value` reads outputs of. */
function nestedReferences(value: unknown, pending: Map<string, CfnResource>): string[] {
  const found: string[] = [];
  JSON.stringify(value ?? null, (_key, item: unknown) => {
    const getAtt = (item as Record<string, unknown> | null)?.['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string' && pending.has(getAtt[0])) found.push(getAtt[0]);
    return item;
  });
  return found;
}

function stringValues(file: string, logicalId: string, values: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (Array.isArray(value)) out[name] = value.join(',');
    else throw new AssemblyError(file, logicalId, `parameter ${name} of the nested stack does not resolve to a string`);
  }
  return out;
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (error) {
    throw new AssemblyError(file, undefined, `not readable JSON: ${(error as Error).message}`);
  }
}
