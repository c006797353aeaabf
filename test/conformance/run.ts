/**
 * `npm run conformance`: the official MCP conformance suite against the local stack.
 *
 * Starts the stack on a free loopback port with the fixture tools in `./tools` (the
 * `greet`, `slow_compute`, `failing_job` and `protocol_error_job` tools the Tasks
 * scenarios call; `confirm_delete`, `multi_input` and `test_tool_with_task`, which ask
 * for input mid-run; the `test_input_required_result_*` tools of the multi round-trip
 * scenarios; the reference server's `test_*` content and elicitation/sampling tools;
 * `json_schema_2020_12_tool`, `test_custom_headers` and `echo`; no handle tools), then runs each scenario with
 * `npx -y -p node@22 -p @modelcontextprotocol/conformance@<version> conformance server`:
 * - 0.1.16: the generic scenarios, the `tools-call-*` content scenarios, progress and
 *   logging during a call, and sampling and elicitation during a call (`tools-call-sampling`,
 *   `tools-call-elicitation`, SEP-1034 defaults, SEP-1330 enums); not those that need a
 *   capability this server does not offer (completions, listed resources and prompts);
 * - 0.2.0-alpha.12: every `tasks-*` scenario, every `input-required-result-*` scenario but
 *   the one that needs prompts (`input-required-result-non-tool-request`), then JSON Schema
 *   2020-12, the SEP-2243 header scenarios and `server-stateless` (SEP-2575, with its
 *   `test_missing_capability`, `test_streaming_elicitation` and `test_logging_tool`
 *   fixtures), against the baseline in
 *   `expected-failures.yaml` (where a WARNING counts as a failure too).
 * Needs the npm registry (npx fetches the suite and Node 22). Prints one summary line per
 * scenario and exits non-zero when any scenario fails. `--verbose` prints the suite's output;
 * `--scenario <name>` (repeatable) runs only the named scenarios.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import { startLocalStack } from '../../local/local-stack.ts';

interface SuiteRun {
  version: string;
  scenarios: readonly string[];
  expectedFailures?: string;
}

const HERE = import.meta.dirname;

const SUITES: readonly SuiteRun[] = [
  {
    version: '0.1.16',
    scenarios: [
      'server-initialize',
      'ping',
      'tools-list',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
      'tools-call-simple-text',
      'tools-call-image',
      'tools-call-audio',
      'tools-call-embedded-resource',
      'tools-call-mixed-content',
      'tools-call-error',
      'tools-call-with-progress',
      'tools-call-with-logging',
      'tools-call-sampling',
      'tools-call-elicitation',
      'elicitation-sep1034-defaults',
      'elicitation-sep1330-enums',
    ],
  },
  {
    version: '0.2.0-alpha.12',
    scenarios: [
      'tasks-lifecycle',
      'tasks-capability-negotiation',
      'tasks-wire-fields',
      'tasks-request-state-removal',
      'tasks-mrtr-input',
      'tasks-request-headers',
      'tasks-dispatch-and-envelope',
      'tasks-status-notifications',
      'tasks-required-task-error',
      'tasks-mrtr-composition',
      // SEP-2322 multi round-trip requests on tools/call. input-required-result-non-tool-request
      // needs prompts, which this server does not offer.
      'input-required-result-basic-elicitation',
      'input-required-result-basic-sampling',
      'input-required-result-basic-list-roots',
      'input-required-result-request-state',
      'input-required-result-multiple-input-requests',
      'input-required-result-multi-round',
      'input-required-result-missing-input-response',
      'input-required-result-result-type',
      'input-required-result-unsupported-methods',
      'input-required-result-tampered-state',
      'input-required-result-capability-check',
      'input-required-result-ignore-extra-params',
      'input-required-result-validate-input',
      'json-schema-2020-12',
      'http-header-validation',
      'http-custom-header-server-validation',
      // SEP-2575 stateless server: per-request _meta, server/discover, version and header
      // checks, -32021 for an undeclared capability, and the request stream's contents.
      'server-stateless',
    ],
    expectedFailures: resolve(HERE, 'expected-failures.yaml'),
  },
];

interface ScenarioOutcome {
  passed: boolean;
  summary: string;
  output: string;
}

/** Runs one scenario; the suite exits 0 when every check passed or failed as the baseline expects. */
function runScenario(suite: SuiteRun, scenario: string, url: string): Promise<ScenarioOutcome> {
  const args = [
    '-y',
    '-p',
    'node@22',
    '-p',
    `@modelcontextprotocol/conformance@${suite.version}`,
    'conformance',
    'server',
    '--url',
    url,
    '--scenario',
    scenario,
  ];
  if (suite.expectedFailures) args.push('--expected-failures', suite.expectedFailures);
  return new Promise((resolvePromise, reject) => {
    const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const plain = stripVTControlCharacters(output);
      const totals = plain.match(/Passed: \d+\/\d+, \d+ failed, \d+ warnings/g)?.at(-1) ?? 'no result line';
      const baseline = /Baseline check passed/.test(plain) && /Expected failures \(in baseline\)/.test(plain) ? ' (expected failures only)' : '';
      resolvePromise({ passed: code === 0, summary: `${totals}${baseline}`, output: plain });
    });
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { verbose: { type: 'boolean', default: false }, scenario: { type: 'string', multiple: true } } });
  const only = values.scenario;
  const started = Date.now();
  // Handle tools off: with them (the default) a client without the Tasks extension gets a
  // handle for a task-required tool, where tasks-required-task-error checks for -32021.
  const stack = await startLocalStack({ toolsDir: resolve(HERE, 'tools'), port: 0, handleTools: false });
  const failures: string[] = [];
  try {
    console.log(`Serving the conformance fixtures at ${stack.url.href}`);
    for (const suite of SUITES) {
      console.log(`\n@modelcontextprotocol/conformance@${suite.version}`);
      for (const scenario of suite.scenarios.filter((s) => !only || only.includes(s))) {
        const outcome = await runScenario(suite, scenario, stack.url.href);
        if (values.verbose)
          console.log(
            outcome.output
              .split('\n')
              .filter((l) => !l.includes('EBADENGINE'))
              .join('\n'),
          );
        console.log(`  ${outcome.passed ? '✓' : '✗'} ${scenario}: ${outcome.summary}`);
        if (!outcome.passed) failures.push(`${suite.version} ${scenario}`);
      }
    }
  } finally {
    await stack.close();
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(failures.length ? `\nFailed: ${failures.join(', ')} (${seconds} s)` : `\nAll scenarios passed (${seconds} s)`);
  return failures.length ? 1 : 0;
}

process.exitCode = await main();
