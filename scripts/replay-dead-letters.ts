/**
 * `npm run replay-dead-letters -- --data DIR [--cdk-out DIR]`: sends every status change the
 * event rule dead-lettered under `<DIR>/dead-letters/` through the rule's target again (the
 * status-sync function of the assembly that ran on DIR, or of --cdk-out), and removes each one
 * that succeeds. Stop the server on DIR first: its data is opened here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ASSEMBLY_RECORD, startDeployedStack } from '../local/as-deployed/index.ts';

const USAGE = 'Usage: npm run replay-dead-letters -- --data DIR [--cdk-out DIR]';
const ARGS = {
  options: { data: { type: 'string' }, 'cdk-out': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  strict: true,
} satisfies ParseArgsConfig;

async function main(): Promise<void> {
  let values: ReturnType<typeof parseArgs<typeof ARGS>>['values'];
  try {
    ({ values } = parseArgs(ARGS));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help || !values.data) {
    console.log(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const record = join(values.data, ASSEMBLY_RECORD);
  const cdkOut = values['cdk-out'] ?? (existsSync(record) ? (JSON.parse(readFileSync(record, 'utf8')) as { cdkOut: string }).cdkOut : undefined);
  if (!cdkOut || !existsSync(join(cdkOut, 'manifest.json'))) {
    console.error(`No assembly to replay through: ${cdkOut ? `${cdkOut} is gone` : `${record} is missing`}; pass --cdk-out DIR (an assembly of the same app).`);
    process.exit(1);
  }
  let stack: Awaited<ReturnType<typeof startDeployedStack>>;
  try {
    stack = await startDeployedStack({ cdkOut, dataDir: values.data, port: 0, log: () => undefined });
  } catch (error) {
    console.error(`Cannot open ${values.data}: ${(error as Error).message} (is the server still running on it?)`);
    process.exit(1);
  }
  try {
    const pending = (await Promise.all(stack.deadLetterQueues.map((q) => q.list()))).flat().length;
    const { replayed, failed } = await stack.replayDeadLetters();
    console.log(`Dead letters: ${pending} found, ${replayed} replayed and removed, ${failed} still failing (kept).`);
    process.exitCode = failed > 0 ? 1 : 0;
  } finally {
    await stack.close();
  }
}

await main();
