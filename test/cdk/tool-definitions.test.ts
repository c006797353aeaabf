/**
 * Every tool folder the stack deploys is valid: `loadToolFolders` checks tool.json and
 * the definition (asl-validator, JSONPath only); here each definition is also checked
 * with its placeholders substituted the way CloudFormation will, ARNs included.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadToolFolders, type ToolFolder } from '../../lambdas/tools/tool-folder.ts';
import { substituteWorkers, workerModuleFile } from '../../lambdas/tools/worker-placeholders.ts';
import { DEFAULT_TOOLS_DIR, DEFAULT_WORKERS_DIR } from '../../cdk/repo-paths.ts';

type AslValidator = (
  definition: unknown,
  options?: { checkPaths?: boolean; checkArn?: boolean },
) => { isValid: boolean; errorsText: (separator?: string) => string };
const validateAsl = createRequire(import.meta.url)('asl-validator') as AslValidator;

let tools: ToolFolder[];

beforeAll(async () => {
  tools = await loadToolFolders(DEFAULT_TOOLS_DIR);
});

describe('the tool folders under state-machines/', () => {
  it('load and validate (the check cdk/app.ts runs before synth)', () => {
    expect(tools.length).toBeGreaterThan(0);
  });

  it('are valid Amazon States Language once the workers are substituted', () => {
    // A durable tool has durable.ts instead of a definition (its check is the loader's: it compiles and exports handler).
    for (const tool of tools.filter((each) => each.definitionText !== undefined)) {
      const resolved = substituteWorkers(tool.definitionText!, (worker) => `arn:aws:lambda:us-east-1:123456789012:function:${worker}`);
      const result = validateAsl(JSON.parse(resolved), { checkPaths: true, checkArn: true });
      expect(result.isValid, `${tool.config.name}: ${result.errorsText('; ')}`).toBe(true);
    }
  });

  it('name only workers that have a handler module', () => {
    for (const tool of tools) {
      for (const worker of tool.workers) {
        expect(existsSync(join(DEFAULT_WORKERS_DIR, workerModuleFile(worker))), `${tool.config.name} -> ${worker}`).toBe(true);
      }
    }
  });
});
