/**
 * The tool.json of a durable tool defined with `defineTool`: its `durable.ts` is loaded (with
 * tsx, so the loader, validate-tools, synth and the local stack read it alike) and the
 * handler's definition becomes tool.json's shape, each schema turned into the JSON Schema
 * `tools/list` serves. The MCP Lambda never runs this: synth writes the result into its asset.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import type { NamespacedUnregister as EsmRegistration } from 'tsx/esm/api';
import * as z from 'zod';
import type { ToolDefinition, ToolSchema } from '../durable/define-tool.ts';

/** What a `durable.ts` says of itself: made by defineTool (with its tool.json), or not. */
export type DefinedToolConfig = { defined: false } | { defined: true; config: Record<string, unknown> } | { defined: true; problem: string };

/**
 * Reads `durableFile`'s definition. A module whose source never names `defineTool` is not
 * loaded at all: a handler of its own keeps its tool.json, and loading costs its imports.
 */
export async function definedToolConfig(durableFile: string, loader?: TypeScriptLoader): Promise<DefinedToolConfig> {
  const source = await readFile(durableFile, 'utf8').catch(() => '');
  if (!source.includes('defineTool')) return { defined: false };
  let handler: unknown;
  try {
    const module = loader ? await loader.import(durableFile) : await withTypeScriptLoader((own) => own.import(durableFile));
    ({ handler } = module as { handler?: unknown });
  } catch (error) {
    return { defined: true, problem: `cannot be loaded (${(error as Error).message})` };
  }
  const definition = (handler as { definition?: unknown } | undefined)?.definition;
  if (typeof handler !== 'function' || typeof definition !== 'object' || definition === null) return { defined: false };
  try {
    return { defined: true, config: toolJsonOf(definition as ToolDefinition) };
  } catch (error) {
    return { defined: true, problem: (error as Error).message };
  }
}

/** Imports TypeScript modules, each module once per loader. */
export interface TypeScriptLoader {
  import(file: string): Promise<unknown>;
}

/**
 * Runs `use` with a loader of its own: tsx's, whatever runs this (node, tsx, vitest), in a
 * fresh namespace, so the modules are read as they are now (an edited durable.ts included)
 * and the tools read in one pass share the modules they import (async-mcp/durable, zod).
 */
export async function withTypeScriptLoader<T>(use: (loader: TypeScriptLoader) => Promise<T>): Promise<T> {
  // Registered on first use: most tool folders never need it. Both hooks, as tsImport does: a
  // durable.ts outside a "type": "module" package loads as CommonJS.
  let registered: Promise<{ esm: EsmRegistration; cjs: { unregister(): void } }> | undefined;
  const api = () => {
    registered ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(([esm, cjs]) => {
      const namespace = `async-mcp-tools-${randomUUID()}`;
      return { cjs: cjs.register({ namespace }), esm: esm.register({ namespace }) };
    });
    return registered;
  };
  try {
    return await use({ import: async (file) => (await api()).esm.import(pathToFileURL(file).href, import.meta.url) });
  } finally {
    if (registered) {
      const { esm, cjs } = await registered;
      await esm.unregister();
      cjs.unregister();
    }
  }
}

/** The definition as tool.json would hold it: the settings, and each schema as JSON Schema. */
export function toolJsonOf(definition: ToolDefinition): Record<string, unknown> {
  const { inputSchema, outputSchema, ...settings } = definition;
  if (!isToolSchema(inputSchema)) throw new Error('inputSchema must be a zod schema (or a Standard Schema that derives JSON Schema)');
  if (outputSchema !== undefined && !isToolSchema(outputSchema))
    throw new Error('outputSchema must be a zod schema (or a Standard Schema that derives JSON Schema)');
  return {
    ...settings,
    // What a client sends, before transforms and defaults; and what it receives, after them.
    inputSchema: jsonSchemaOf(inputSchema, 'input', 'inputSchema'),
    ...(outputSchema === undefined ? {} : { outputSchema: jsonSchemaOf(outputSchema, 'output', 'outputSchema') }),
  };
}

function isToolSchema(schema: unknown): schema is ToolSchema {
  const standard = (schema as { '~standard'?: { validate?: unknown } } | null | undefined)?.['~standard'];
  return typeof standard?.validate === 'function';
}

function jsonSchemaOf(schema: ToolSchema, io: 'input' | 'output', key: string): Record<string, unknown> {
  let derived: Record<string, unknown>;
  try {
    const converter = schema['~standard'].jsonSchema;
    // What JSON Schema cannot say (a transform's output, a custom check) is listed as any value: the schema itself still checks it.
    if (schema['~standard'].vendor === 'zod')
      derived = z.toJSONSchema(schema as unknown as z.ZodType, { io, unrepresentable: 'any', override: withoutSafeIntegerBounds });
    else if (converter) derived = converter[io]({ target: 'draft-2020-12' });
    else throw new Error(`a ${schema['~standard'].vendor} schema that does not derive JSON Schema (Standard JSON Schema)`);
  } catch (error) {
    throw new Error(`${key} has no JSON Schema (${(error as Error).message})`);
  }
  // MCP's default dialect is 2020-12 already, and tool.json schemas carry no $schema.
  const { $schema: _dialect, ...rest } = derived;
  return rest;
}

/**
 * zod bounds every integer by the safe integers; the bounds say nothing a client needs and
 * would make the listed schema of `z.number().int().min(0)` differ from the tool.json it replaces.
 */
function withoutSafeIntegerBounds({ jsonSchema }: { jsonSchema: Record<string, unknown> }): void {
  if (jsonSchema.type !== 'integer') return;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
}
