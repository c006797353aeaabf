/**
 * Copies of a synthesized cloud assembly with one thing changed, for tests that prove a part is
 * read from the assembly: the copy is what runs, so the change must show in what the stack does.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CloudFormation resource as a template holds it. */
export interface TemplateResource {
  Type: string;
  /** The properties the tests edit are named; the rest stay as the template holds them. */
  Properties?: {
    Environment?: { Variables: Record<string, string> };
    PolicyDocument?: { Statement: unknown[] };
    [name: string]: unknown;
  };
  Metadata?: Record<string, unknown>;
}

/** A private copy of the assembly at `source`; `remove()` deletes it. */
export async function copyAssembly(source: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'async-mcp-tampered-'));
  await cp(source, dir, { recursive: true });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Edits, in place, the one resource of the assembly's templates (top-level and nested) that
 * `matches`; throws unless exactly one does, so a renamed resource fails the test loudly.
 */
export async function editResource(
  dir: string,
  matches: (logicalId: string, resource: TemplateResource) => boolean,
  edit: (resource: TemplateResource, logicalId: string) => void,
): Promise<string> {
  const hits: Array<{ file: string; template: { Resources: Record<string, TemplateResource> }; logicalId: string }> = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.template.json'))) {
    const template = JSON.parse(await readFile(join(dir, file), 'utf8')) as { Resources: Record<string, TemplateResource> };
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (matches(logicalId, resource)) hits.push({ file, template, logicalId });
    }
  }
  if (hits.length !== 1) throw new Error(`expected one matching resource in ${dir}, found ${hits.map((h) => h.logicalId).join(', ') || 'none'}`);
  const [{ file, template, logicalId }] = hits as [(typeof hits)[0]];
  const resource = template.Resources[logicalId];
  if (!resource) throw new Error(`${file} has no resource ${logicalId}`);
  edit(resource, logicalId);
  await writeFile(join(dir, file), JSON.stringify(template, null, 1));
  return logicalId;
}

/** The bundled asset folder of the one function resource that `matches`. */
export async function assetDirOf(dir: string, matches: (logicalId: string) => boolean): Promise<string> {
  let assetPath: string | undefined;
  await editResource(
    dir,
    (id, r) => r.Type === 'AWS::Lambda::Function' && matches(id),
    (resource) => {
      assetPath = resource.Metadata?.['aws:asset:path'] as string | undefined;
    },
  );
  if (!assetPath) throw new Error('the function has no aws:asset:path metadata');
  return join(dir, assetPath);
}
