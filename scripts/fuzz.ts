/**
 * `npm run fuzz [-- --cases N] [--seed S]`: runs the seeded edge fuzzer (the suite `npm test`
 * runs with a fixed seed) for as many cases as asked, prints the counts and every failing
 * case with its minimal body. Exit code 0 when every case passed, 1 when any failed, 2 on a
 * usage error.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { formatFuzzReport, runEdgeFuzz } from '../test/fuzz/edge-fuzzer.ts';

const USAGE = 'usage: npm run fuzz -- [--cases N] [--seed S]   (defaults: 10000 cases, a random seed)';
const ARGS = { options: { cases: { type: 'string' }, seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } } } satisfies ParseArgsConfig;

async function main(): Promise<number> {
  let values: ReturnType<typeof parseArgs<typeof ARGS>>['values'];
  try {
    ({ values } = parseArgs(ARGS));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const cases = Number(values.cases ?? 10_000);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(values.seed);
  if (!Number.isSafeInteger(cases) || cases < 1 || !Number.isSafeInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    console.error(`--cases must be a positive integer and --seed an integer from 0 to 4294967295\n${USAGE}`);
    return 2;
  }
  const report = await runEdgeFuzz({ seed, cases });
  console.log(formatFuzzReport(report));
  if (report.failureCount > 0) console.log(`replay: npm run fuzz -- --seed ${seed} --cases ${cases}`);
  return report.failureCount > 0 ? 1 : 0;
}

process.exitCode = await main();
