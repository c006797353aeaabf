import '../local/promise-with-resolvers.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ExecutionError, StateMachine, type RunOptions, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFINITION_FILE, TOOL_FILE, loadToolFolders, type ToolConfig } from '../../lambdas/tools/tool-folder.ts';
import { substituteWorkers, workerModuleFile } from '../../lambdas/tools/worker-placeholders.ts';
import { DEFAULT_SEED } from '../../lambdas/examples/dataset-plan.ts';
import { syntheticDataset } from '../../lambdas/examples/synthetic-dataset.ts';

const TOOLS_DIR = 'state-machines';
const EXAMPLE_TOOLS = ['analyze_dataset', 'approve_deployment', 'quick_calculation', 'run_test_suite'];

type Overrides = NonNullable<RunOptions['overrides']>;
type LocalHandler = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
type Json = Parameters<StateMachine['run']>[0];

interface LoadedTool {
  config: ToolConfig;
  /** The definition with worker placeholders resolved to Lambda ARNs, as the CDK stack deploys it. */
  definition: StateMachineDefinition;
  overrides: Overrides;
  /** The states that ask the client a question (`.waitForTaskToken` on the request_input worker). */
  asks: string[];
}

/**
 * Stands in for the client: given a question (the request_input payload's `key` and
 * `request`), returns its result, which resumes the state, or throws the error the
 * worker's answer would fail the state with (its name is the Error, its message the Cause).
 */
type Client = (question: { key?: string; request: { method: string; params: Record<string, unknown> } }) => unknown;

type Execution = { status: 'SUCCEEDED'; output: unknown } | { status: 'FAILED'; error: string; cause: string };

const WORKER_RESOURCE = /^\$\{Worker_([a-z][a-z0-9_]*)\}$/;
const WAIT_FOR_TASK_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const REQUEST_INPUT = '${Worker_request_input}';
const REPORT_PROGRESS = '${Worker_report_progress}';
/** What the report_progress states of the last execution reported, in order. */
const reported: unknown[] = [];
const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * Reads a tool folder and maps every worker Task state to its handler module, every state
 * that asks the client a question to the test's stand-in client, and every Wait to 0 ms.
 */
async function loadTool(tool: string): Promise<LoadedTool> {
  const dir = join(TOOLS_DIR, tool);
  const config = JSON.parse(await readFile(join(dir, TOOL_FILE), 'utf8')) as ToolConfig;
  const text = await readFile(join(dir, DEFINITION_FILE), 'utf8');
  const taskResourceLocalHandlers: Record<string, LocalHandler> = {};
  const waitTimeOverrides: Record<string, number> = {};
  const asks: string[] = [];

  const visit = async (machine: { States: Record<string, Record<string, unknown>> }): Promise<void> => {
    for (const [name, state] of Object.entries(machine.States)) {
      if (state.Type === 'Task' && state.Resource === WAIT_FOR_TASK_TOKEN && (state.Parameters as { FunctionName?: unknown })?.FunctionName === REQUEST_INPUT) {
        asks.push(name);
      } else if (state.Type === 'Task' && state.Resource === REPORT_PROGRESS) {
        // The server's record is not here: the stand-in keeps each report and passes the input on.
        taskResourceLocalHandlers[name] = (async (report: unknown) => {
          reported.push(report);
          return report;
        }) as LocalHandler;
      } else if (state.Type === 'Task') {
        const worker = WORKER_RESOURCE.exec(String(state.Resource))?.[1];
        if (!worker) throw new Error(`${tool}: Task state ${name} does not call a worker`);
        // The worker convention (worker-placeholders.ts) decides the module, as it does in the CDK stack.
        const moduleUrl = new URL(`../../lambdas/handlers/workers/${workerModuleFile(worker)}`, import.meta.url).href;
        const module = (await import(/* @vite-ignore */ moduleUrl)) as { handler: (event: unknown) => Promise<unknown> };
        taskResourceLocalHandlers[name] = module.handler as LocalHandler;
      }
      if (state.Type === 'Wait') waitTimeOverrides[name] = 0;
      const processor = (state.ItemProcessor ?? state.Iterator) as typeof machine | undefined;
      if (processor) await visit(processor);
      for (const branch of (state.Branches ?? []) as (typeof machine)[]) await visit(branch);
    }
  };
  await visit(JSON.parse(text) as { States: Record<string, Record<string, unknown>> });

  const resolved = substituteWorkers(text, (worker) => `arn:aws:lambda:us-east-1:123456789012:function:${worker}`);
  return { config, definition: JSON.parse(resolved) as StateMachineDefinition, overrides: { taskResourceLocalHandlers, waitTimeOverrides }, asks };
}

const tools = new Map<string, LoadedTool>();

/**
 * Runs a tool's state machine on the execution input the server sends (DESIGN §3); its
 * questions go to `client`, which answers at once.
 */
async function execute(tool: string, args: Record<string, unknown>, client?: Client): Promise<Execution> {
  const loaded = tools.get(tool)!;
  expect(ajv.validate(loaded.config.inputSchema, args), `arguments valid for ${tool}: ${ajv.errorsText()}`).toBe(true);
  const input = { arguments: args, operation: { token: 'example-token', tool } } as Json;
  const answering = Object.fromEntries(
    loaded.asks.map((name) => [name, (async (call: { Payload: Parameters<Client>[0] }) => client!(call.Payload)) as LocalHandler]),
  );
  const overrides = { ...loaded.overrides, taskResourceLocalHandlers: { ...loaded.overrides.taskResourceLocalHandlers, ...answering } };
  reported.length = 0;
  try {
    const output = await new StateMachine(loaded.definition).run(input, { overrides, context: { Task: { Token: 'test-task-token' } } }).result;
    if (loaded.config.outputSchema) {
      expect(ajv.validate(loaded.config.outputSchema, output), `output matches the outputSchema: ${ajv.errorsText()}`).toBe(true);
    }
    return { status: 'SUCCEEDED', output };
  } catch (error) {
    if (!(error instanceof ExecutionError)) throw error;
    // The interpreter wraps the failing state's error: its name is the Error, its message the Cause.
    const failure = error.cause as Error;
    return { status: 'FAILED', error: failure.name, cause: failure.message };
  }
}

beforeAll(async () => {
  for (const tool of EXAMPLE_TOOLS) tools.set(tool, await loadTool(tool));
});

describe('example tool folders', () => {
  it('pass the tool folder loader', async () => {
    const folders = await loadToolFolders(TOOLS_DIR);
    const examples = folders.filter((folder) => EXAMPLE_TOOLS.includes(folder.config.name));
    expect(
      examples.map(({ config, workers }) => ({
        name: config.name,
        invocation: config.invocation,
        workflowType: config.workflowType,
        workers,
      })),
    ).toEqual([
      {
        name: 'analyze_dataset',
        invocation: 'async',
        workflowType: 'STANDARD',
        workers: ['compute_chunk_stats', 'merge_chunk_stats', 'plan_dataset_chunks', 'report_progress'],
      },
      { name: 'approve_deployment', invocation: 'async', workflowType: 'STANDARD', workers: ['apply_deployment', 'plan_deployment', 'request_input'] },
      { name: 'quick_calculation', invocation: 'sync', workflowType: 'EXPRESS', workers: ['calculate'] },
      { name: 'run_test_suite', invocation: 'both', workflowType: 'STANDARD', workers: ['plan_test_run', 'report_progress', 'report_test_suite'] },
    ]);
  });

  it('describe every input and output property for the model', () => {
    for (const { config } of tools.values()) {
      for (const schema of [config.inputSchema, config.outputSchema]) {
        const properties = (schema as { properties?: Record<string, { description?: string }> }).properties ?? {};
        expect(Object.keys(properties).length, `${config.name} has properties`).toBeGreaterThan(0);
        for (const [key, property] of Object.entries(properties)) {
          expect(property.description, `${config.name}.${key} has a description`).toBeTruthy();
        }
      }
    }
  });
});

describe('analyze_dataset', () => {
  /** Regenerates every row sequentially and summarises it with a two-pass reference. */
  function reference(rows: number, seed: number) {
    const dataset = syntheticDataset(seed);
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < rows; i++) {
      const x = dataset.valueAt(i);
      sum += x;
      if (x < min) min = x;
      if (x > max) max = x;
    }
    const mean = sum / rows;
    let squares = 0;
    for (let i = 0; i < rows; i++) squares += (dataset.valueAt(i) - mean) ** 2;
    return { count: rows, mean, min, max, stddev: Math.sqrt(squares / rows) };
  }

  function expectClose(actual: number, expected: number): void {
    const error = expected === 0 ? Math.abs(actual) : Math.abs((actual - expected) / expected);
    expect(error, `${actual} vs ${expected}`).toBeLessThanOrEqual(1e-9);
  }

  it('reports progress per chunk: one increment per chunk, out of the number of chunks', async () => {
    const execution = await execute('analyze_dataset', { rows: 250_001, seed: 7 });
    expect(execution.status).toBe('SUCCEEDED');
    const chunks = reported.length;
    expect(chunks).toBeGreaterThan(1);
    expect(reported).toEqual(Array.from({ length: chunks }, () => ({ increment: 1, total: chunks, message: 'Summarised a chunk' })));
  });

  it.each([
    { rows: 1, seed: 11 },
    { rows: 1000, seed: 42 },
    { rows: 250_001, seed: -3 },
    { rows: 1_000_000, seed: 2 ** 40 + 5 },
  ])('matches a sequential regeneration of all rows: $rows rows, seed $seed', async ({ rows, seed }) => {
    const execution = await execute('analyze_dataset', { rows, seed, delaySeconds: 5 });
    expect(execution.status).toBe('SUCCEEDED');
    const output = (execution as { output: Record<string, number> }).output;
    const expected = reference(rows, seed);
    expect(Object.keys(output).sort()).toEqual(['count', 'max', 'mean', 'min', 'stddev']);
    expect(output.count).toBe(rows);
    expect(output.min).toBe(expected.min);
    expect(output.max).toBe(expected.max);
    expectClose(output.mean!, expected.mean);
    expectClose(output.stddev!, expected.stddev);
  });

  it('uses the default seed when none is given, and gives the same numbers every time', async () => {
    const unseeded = await execute('analyze_dataset', { rows: 123_456 });
    const seeded = await execute('analyze_dataset', { rows: 123_456, seed: DEFAULT_SEED });
    expect(unseeded.status).toBe('SUCCEEDED');
    expect(unseeded).toEqual(seeded);
  });
});

describe('quick_calculation', () => {
  it.each([
    ['add', 2, 3, 5],
    ['sub', 2, 3, -1],
    ['mul', 2, 3, 6],
    ['div', 3, 2, 1.5],
  ] as const)('%s(%d, %d) returns { result: %d }', async (op, a, b, result) => {
    await expect(execute('quick_calculation', { a, b, op })).resolves.toEqual({ status: 'SUCCEEDED', output: { result } });
  });

  it('fails the execution with Error DivisionByZero when dividing by zero (a tool error, not a protocol error)', async () => {
    const execution = await execute('quick_calculation', { a: 1, b: 0, op: 'div' });
    expect(execution).toMatchObject({ status: 'FAILED', error: 'DivisionByZero' });
  });
});

describe('run_test_suite', () => {
  it('waits, then reports passed and failed', async () => {
    await expect(execute('run_test_suite', { suite: 'checkout', tests: 120, failures: 7, durationSeconds: 30 })).resolves.toEqual({
      status: 'SUCCEEDED',
      output: { suite: 'checkout', passed: 113, failed: 7, durationSeconds: 30 },
    });
  });

  it('reports progress each second of its run', async () => {
    await execute('run_test_suite', { suite: 'checkout', tests: 10, failures: 0, durationSeconds: 3 });
    expect(reported).toEqual([1, 2, 3].map((elapsed) => ({ progress: elapsed, total: 3, message: `Ran ${elapsed} of 3 seconds` })));
  });

  it('reports an hour-long run 120 times, evenly, to stay within the execution history limit', async () => {
    await execute('run_test_suite', { suite: 'nightly', tests: 10, failures: 0, durationSeconds: 3600 });
    expect(reported).toHaveLength(120);
    expect(reported.at(0)).toMatchObject({ progress: 30, total: 3600 });
    expect(reported.at(-1)).toMatchObject({ progress: 3600, total: 3600 });
  });

  it('accepts failures equal to tests', async () => {
    const execution = await execute('run_test_suite', { suite: 's', tests: 3, failures: 3, durationSeconds: 0, crash: false });
    expect(execution).toEqual({ status: 'SUCCEEDED', output: { suite: 's', passed: 0, failed: 3, durationSeconds: 0 } });
  });

  it('fails with Error TestSuiteCrashed when asked to crash', async () => {
    const execution = await execute('run_test_suite', { suite: 'unit', tests: 5, failures: 0, durationSeconds: 1, crash: true });
    expect(execution).toMatchObject({ status: 'FAILED', error: 'TestSuiteCrashed' });
  });

  it('asks for a JSON-RPC -32602 error (Mcp.ProtocolError) when failures exceed tests', async () => {
    const execution = await execute('run_test_suite', { suite: 'unit', tests: 2, failures: 3, durationSeconds: 0 });
    expect(execution).toMatchObject({ status: 'FAILED', error: 'Mcp.ProtocolError' });
    const cause = JSON.parse((execution as { cause: string }).cause) as unknown;
    expect(cause).toEqual({ code: -32602, message: 'Invalid arguments: failures must not exceed tests' });
  });
});

describe('approve_deployment', () => {
  const CHANGES = ['api: v2.3.1', 'web: v1.9.0', 'db: add index on orders.created_at'];
  /** The question the client was asked, and the client's answer to it. */
  function answering(answer: () => unknown) {
    const asked: Parameters<Client>[0][] = [];
    const client: Client = (question) => {
      asked.push(question);
      return answer();
    };
    return { asked, client };
  }
  /** The error a declined or cancelled elicitation fails the waiting state with (see input-requests.ts). */
  function refusal(action: 'decline' | 'cancel'): Error {
    return Object.assign(new Error(JSON.stringify({ action })), { name: 'Mcp.InputDeclined' });
  }

  it('asks "Deploy 3 changes to staging?" with the changes listed and a comment field, under the key approval', async () => {
    const { asked, client } = answering(() => ({ action: 'accept', content: {} }));
    await execute('approve_deployment', { environment: 'staging', changes: CHANGES }, client);
    expect(asked).toEqual([
      {
        taskToken: 'test-task-token',
        key: 'approval',
        request: {
          method: 'elicitation/create',
          params: {
            message: 'Deploy 3 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0\n3. db: add index on orders.created_at',
            requestedSchema: {
              type: 'object',
              properties: { comment: { type: 'string', title: 'Comment', description: 'A note for the deployment log (optional).', maxLength: 500 } },
            },
          },
        },
      },
    ]);
  });

  it('accepted with a comment: deploys every change and reports the comment', async () => {
    const { client } = answering(() => ({ action: 'accept', content: { comment: 'ship it' } }));
    const execution = await execute('approve_deployment', { environment: 'staging', changes: CHANGES }, client);
    expect(execution).toEqual({
      status: 'SUCCEEDED',
      output: {
        environment: 'staging',
        planned: 3,
        deployed: true,
        decision: 'accept',
        comment: 'ship it',
        changes: CHANGES.map((change, i) => ({ step: i + 1, change, status: 'deployed' })),
        summary: 'Deployed 3 changes to staging. Comment: ship it',
      },
    });
  });

  it('accepted without a comment: deploys, and the report has no comment', async () => {
    const { client } = answering(() => ({ action: 'accept', content: {} }));
    const execution = await execute('approve_deployment', { environment: 'production', changes: ['api: v3'] }, client);
    expect(execution).toMatchObject({ status: 'SUCCEEDED', output: { deployed: true, decision: 'accept', summary: 'Deployed 1 change to production.' } });
    expect((execution as { output: object }).output).not.toHaveProperty('comment');
  });

  it.each([
    ['decline', 'Deployed nothing to staging: the approver declined.'],
    ['cancel', 'Deployed nothing to staging: the approver dismissed the question.'],
  ] as const)('answered %s (Mcp.InputDeclined, caught): deploys nothing and says why', async (action, summary) => {
    const { client } = answering(() => {
      throw refusal(action);
    });
    const execution = await execute('approve_deployment', { environment: 'staging', changes: CHANGES }, client);
    expect(execution).toEqual({
      status: 'SUCCEEDED',
      output: {
        environment: 'staging',
        planned: 3,
        deployed: false,
        decision: action,
        changes: CHANGES.map((change, i) => ({ step: i + 1, change, status: 'skipped' })),
        summary,
      },
    });
  });

  it("nobody answers within the state's TimeoutSeconds (States.Timeout, caught): deploys nothing", async () => {
    const { client } = answering(() => {
      throw Object.assign(new Error('The task timed out'), { name: 'States.Timeout' });
    });
    const execution = await execute('approve_deployment', { environment: 'staging', changes: CHANGES }, client);
    expect(execution).toMatchObject({
      status: 'SUCCEEDED',
      output: { deployed: false, decision: 'timeout', summary: 'Deployed nothing to staging: nobody answered in time.' },
    });
  });

  it('a client that cannot be asked (Mcp.CapabilityMissing) fails the execution: a tool error naming the reason', async () => {
    const { client } = answering(() => {
      throw Object.assign(new Error('The client did not declare the elicitation capability'), { name: 'Mcp.CapabilityMissing' });
    });
    const execution = await execute('approve_deployment', { environment: 'staging', changes: CHANGES }, client);
    expect(execution).toMatchObject({ status: 'FAILED', error: 'Mcp.CapabilityMissing' });
  });
});
