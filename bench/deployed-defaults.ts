/**
 * What the default deployment bills, read from the default configuration's synthesized
 * template (test/cdk/template-snapshots/defaults.json, which the template snapshot test keeps
 * equal to what `cdk synth` makes): each function is found by its description. The benches
 * once read these figures from the CDK source with patterns, which a restructuring broke.
 */
import { readFileSync } from 'node:fs';

interface LambdaFunction {
  Description?: unknown;
  MemorySize?: unknown;
  Timeout?: unknown;
}

interface Stack {
  Resources?: Record<string, { Type: string; Properties?: LambdaFunction }>;
}

function defaultFunctions(): LambdaFunction[] {
  const template = JSON.parse(readFileSync(new URL('../test/cdk/template-snapshots/defaults.json', import.meta.url), 'utf8')) as Record<string, Stack>;
  return Object.values(template).flatMap((stack) =>
    Object.values(stack.Resources ?? {}).flatMap((resource) => (resource.Type === 'AWS::Lambda::Function' && resource.Properties ? [resource.Properties] : [])),
  );
}

function numberOf(descriptionStart: string, property: 'MemorySize' | 'Timeout'): number {
  const found = defaultFunctions().find((f) => String(f.Description ?? '').startsWith(descriptionStart))?.[property];
  if (typeof found !== 'number') throw new Error(`bench: the default template has no function described "${descriptionStart}…" with a ${property}`);
  return found;
}

/** The Lambda memory sizes (MB) the CDK construct deploys by default. */
export function lambdaMemorySizes(): { mcp: number; statusSync: number; worker: number } {
  return {
    mcp: numberOf('async-mcp MCP server', 'MemorySize'),
    worker: numberOf('async-mcp worker ', 'MemorySize'),
    statusSync: numberOf('async-mcp status sync', 'MemorySize'),
  };
}

/** The MCP function's timeout (s) by default: the blocking bound plus the request margin. It caps a stream's life. */
export function mcpFunctionTimeoutSeconds(): number {
  return numberOf('async-mcp MCP server', 'Timeout');
}
