/**
 * `npm run new-tool -- <name> [--sync|--async|--both] [--jsonata] [--worker] [--input] [--durable]`:
 * scaffolds `state-machines/<name>/` (tool.json + definition.asl.json) that passes
 * validate-tools and runs locally as it is; `--worker` adds a worker stub the definition
 * calls; `--input` makes it ask the client to confirm first (elicitation, through the
 * built-in request_input worker), and end as a tool error if declined. `--durable` writes
 * the tool in TypeScript instead: tool.json + durable.ts, a Lambda durable function (with
 * `--input`, it asks through `askClient`).
 * `--tools-dir` and `--workers-dir` choose other directories. Refuses to overwrite.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { DEFINITION_FILE, DURABLE_FILE, TOOL_FILE } from '../lambdas/tools/tool-config.ts';
import { REQUEST_INPUT_WORKER } from '../lambdas/tools/request-input-states.ts';
import { placeholderFor, workerModuleFile, workerSubstitutionKey } from '../lambdas/tools/worker-placeholders.ts';
import { toolTestFile } from './new-tool-test-file.ts';
import { commandAsStarted } from '../client/command-as-started.ts';
import { docsPath, shownPath } from '../client/help-paths.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const USAGE = `usage: ${commandAsStarted('new-tool', 'new-tool')} <name> [--sync|--async|--both] [--jsonata] [--worker] [--input] [--durable] [--tools-dir DIR] [--workers-dir DIR]`;
const WAIT_FOR_TASK_TOKEN = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
/** How long the scaffold waits for an answer: a person may take a while. */
const ASK_TIMEOUT_SECONDS = 3600;
/** A durable tool's scaffolded execution timeout: a day, well past the question's hour. */
const DURABLE_TIMEOUT_SECONDS = 24 * 3600;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

type Invocation = 'sync' | 'async' | 'both';

interface ScaffoldOptions {
  name: string;
  invocation: Invocation;
  jsonata: boolean;
  worker: boolean;
  /** Ask the client to confirm before the work. */
  input: boolean;
  /** A Lambda durable function (durable.ts) instead of a state machine. */
  durable: boolean;
  toolsDir: string;
  workersDir: string;
}

/** Writes the scaffold; returns the files written. */
function scaffoldTool(options: ScaffoldOptions): string[] {
  const { name, invocation, jsonata } = options;
  const folder = join(options.toolsDir, name);
  if (existsSync(folder)) throw new Error(`${folder} already exists`);
  // Worker placeholders take lower-case names with underscores.
  const worker = options.worker
    ? name
        .toLowerCase()
        .replace(/[^a-z0-9_]/g, '_')
        .replace(/^[^a-z]+/, '') || 'tool_worker'
    : undefined;
  const workerFile = worker ? join(options.workersDir, workerModuleFile(worker)) : undefined;
  if (workerFile && existsSync(workerFile)) throw new Error(`${workerFile} already exists`);

  const tool = {
    name,
    title: name.replaceAll(/[_.-]+/g, ' ').replace(/^\w/, (c) => c.toUpperCase()),
    description: `Echoes its text back. Describe what ${name} does, when to call it, and what it returns.`,
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to echo.' } },
      required: ['text'],
      additionalProperties: false,
    },
    outputSchema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
    invocation,
    ...(options.durable
      ? // A durable execution is STANDARD-like whatever the invocation; its timeout is its own.
        { durable: { executionTimeoutSeconds: DURABLE_TIMEOUT_SECONDS } }
      : // EXPRESS runs sync tools cheaply (up to 5 minutes); async and both need STANDARD, and so
        // does waiting for an answer (.waitForTaskToken).
        { workflowType: invocation === 'sync' && !options.input ? 'EXPRESS' : 'STANDARD' }),
  };
  const work = definition(name, jsonata, worker);
  const files: [string, string][] = options.durable
    ? // A durable tool is its durable.ts alone: defineTool holds what tool.json would.
      [[join(folder, DURABLE_FILE), durableModule(tool, options.input)]]
    : [
        [join(folder, TOOL_FILE), json(tool)],
        [join(folder, DEFINITION_FILE), json(options.input ? askingFirst(work, jsonata) : work)],
      ];
  if (workerFile && worker) files.push([workerFile, workerStub(name, worker)]);
  // Its test, under the project's test/ (new-tool-test-file.ts says where, and when none is written).
  const test = toolTestFile(options);
  if (test) files.push(test);
  mkdirSync(folder, { recursive: true });
  if (workerFile) mkdirSync(options.workersDir, { recursive: true });
  for (const [file, text] of files) writeFileSync(file, text, { flag: 'wx' });
  return files.map(([file]) => file);
}

/** A definition as the scaffold writes it. */
interface Definition {
  Comment: string;
  QueryLanguage?: 'JSONata';
  StartAt: string;
  States: Record<string, unknown>;
}

function definition(name: string, jsonata: boolean, worker: string | undefined): Definition {
  const comment = `${name}: replace these states with the tool's work. The input is { arguments, operation }.`;
  const resource = worker ? `\${${workerSubstitutionKey(worker)}}` : undefined;
  if (jsonata) {
    const state = resource
      ? {
          Type: 'Task',
          Resource: resource,
          Arguments: '{% $states.input.arguments %}',
          Output: { echo: '{% $states.result.echo %}' },
          TimeoutSeconds: 60,
          End: true,
        }
      : { Type: 'Pass', Output: { echo: '{% $states.input.arguments.text %}' }, End: true };
    return { Comment: comment, QueryLanguage: 'JSONata', StartAt: 'Echo', States: { Echo: state } };
  }
  const state = resource
    ? { Type: 'Task', Resource: resource, InputPath: '$.arguments', ResultSelector: { 'echo.$': '$.echo' }, TimeoutSeconds: 60, End: true }
    : { Type: 'Pass', Parameters: { 'echo.$': '$.arguments.text' }, End: true };
  return { Comment: comment, StartAt: 'Echo', States: { Echo: state } };
}

/**
 * `work` preceded by a question: the client confirms (elicitation) or the tool ends as a tool
 * error. The answer is kept beside the input (`confirmation`), so the work sees what it saw.
 */
function askingFirst(work: Definition, jsonata: boolean): Definition {
  const schema = { type: 'object', properties: {} };
  const declined = { ErrorEquals: ['Mcp.InputDeclined'], Next: 'Declined' };
  const confirm = jsonata
    ? {
        Type: 'Task',
        Resource: WAIT_FOR_TASK_TOKEN,
        Arguments: {
          FunctionName: placeholderFor(REQUEST_INPUT_WORKER),
          Payload: {
            taskToken: '{% $states.context.Task.Token %}',
            key: 'confirm',
            request: { method: 'elicitation/create', params: { message: "{% 'Echo \"' & $states.input.arguments.text & '\"?' %}", requestedSchema: schema } },
          },
        },
        Output: "{% $merge([$states.input, { 'confirmation': $states.result }]) %}",
        TimeoutSeconds: ASK_TIMEOUT_SECONDS,
        Catch: [declined],
        Next: work.StartAt,
      }
    : {
        Type: 'Task',
        Resource: WAIT_FOR_TASK_TOKEN,
        Parameters: {
          FunctionName: placeholderFor(REQUEST_INPUT_WORKER),
          Payload: {
            'taskToken.$': '$$.Task.Token',
            key: 'confirm',
            request: { method: 'elicitation/create', params: { 'message.$': 'States.Format(\'Echo "{}"?\', $.arguments.text)', requestedSchema: schema } },
          },
        },
        ResultPath: '$.confirmation',
        TimeoutSeconds: ASK_TIMEOUT_SECONDS,
        Catch: [{ ...declined, ResultPath: '$.declined' }],
        Next: work.StartAt,
      };
  return {
    Comment: `${work.Comment} Confirm asks the client first (Mcp.CapabilityMissing if it cannot answer elicitation); a decline or cancel ends the tool as an error.`,
    ...(jsonata ? { QueryLanguage: 'JSONata' } : {}),
    StartAt: 'Confirm',
    States: { Confirm: confirm, ...work.States, Declined: { Type: 'Fail', Error: 'Declined', Cause: 'The user declined, so nothing was done.' } },
  };
}

/**
 * A durable function tool's module, defined by `defineTool` (no tool.json): the settings, zod
 * schemas, a checkpointed step and progress, and with `input` the question `askingFirst`
 * asks, through `context.askClient` (a callback the client's answer completes).
 */
function durableModule(tool: { name: string; title: string; description: string; invocation: Invocation }, input: boolean): string {
  const { name } = tool;
  const helpers = input ? 'defineTool, DurableToolError, INPUT_ERRORS' : 'defineTool';
  const about = input ? '\n * It asks the client to confirm first; a decline or cancel ends the tool as an error.' : '';
  const ask = input
    ? `
    // Suspends (nothing runs, nothing is billed) until the client answers, for up to an hour;
    // a client that cannot answer elicitation fails the tool with Mcp.CapabilityMissing.
    const request = { method: 'elicitation/create', params: { message: \`Echo "\${text}"?\`, requestedSchema: { type: 'object', properties: {} } } };
    const confirmed = await context.askClient(request, { key: 'confirm', timeout: { hours: ${ASK_TIMEOUT_SECONDS / 3600} } }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof DurableToolError && error.name === INPUT_ERRORS.declined) return false;
        throw error;
      },
    );
    if (!confirmed) return { isError: true, content: [{ type: 'text', text: 'The user declined, so nothing was done.' }] };`
    : '';
  return `/**
 * ${name}: a tool written as a Lambda durable function, defined here alone: its settings, its
 * zod schemas (listed as JSON Schema, and typing the handler) and its handler. Replace the
 * schemas and steps with the tool's own. \`args\` are the arguments, checked against
 * inputSchema; the handler returns the structured result outputSchema describes, or a whole
 * result (content, structuredContent, isError).${about}
 */
import { ${helpers} } from 'async-mcp/durable';
import { z } from 'zod';

export const handler = defineTool(
  {
    name: ${quoted(name)},
    title: ${quoted(tool.title)},
    description: ${quoted(tool.description)},
    inputSchema: z.strictObject({ text: z.string().describe('The text to echo.') }),
    outputSchema: z.object({ echo: z.string() }),
    invocation: '${tool.invocation}',
    // A durable execution is STANDARD-like whatever the invocation; its timeout is its own.
    durable: { executionTimeoutSeconds: ${DURABLE_TIMEOUT_SECONDS} },
  },
  async ({ text }, context) => {${ask}
    await context.reportProgress({ progress: 0, total: 1, message: 'Echoing' });
    // A step's result is checkpointed: a replay (after a wait, a question or a restart) reuses it.
    const echo = await context.step('echo', async () => text);
    await context.reportProgress({ progress: 1, total: 1, message: 'Echoed' });
    return { structuredContent: { echo }, content: [{ type: 'text', text: echo }] };
  },
);
`;
}

/** A string as a single-quoted TypeScript literal. */
function quoted(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function workerStub(tool: string, worker: string): string {
  return `/** Worker \`${worker}\` (${tool}): \`{ text }\` -> \`{ echo }\`. Replace with the tool's work. */

/** Lambda entry point: Step Functions passes the tool's arguments. */
export async function handler(event: { text?: unknown }): Promise<{ echo: string }> {
  if (typeof event.text !== 'string') throw new TypeError('${worker}: text must be a string');
  return { echo: event.text };
}
`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function main(): number {
  const args = {
    allowPositionals: true,
    options: {
      sync: { type: 'boolean' },
      async: { type: 'boolean' },
      both: { type: 'boolean' },
      jsonata: { type: 'boolean' },
      worker: { type: 'boolean' },
      input: { type: 'boolean' },
      durable: { type: 'boolean' },
      'tools-dir': { type: 'string' },
      'workers-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  } satisfies ParseArgsConfig;
  let parsed: ReturnType<typeof parseArgs<typeof args>>;
  try {
    parsed = parseArgs(args);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const toolsDir = resolve(values['tools-dir'] ?? join(REPO_ROOT, 'state-machines'));
  const workersDir = resolve(values['workers-dir'] ?? join(REPO_ROOT, 'lambdas', 'handlers', 'workers'));
  if (values.help) {
    console.log(`${USAGE}
  --tools-dir DIR    where the tool's folder is written (default: ${shownPath(toolsDir)})
  --workers-dir DIR  where --worker writes its worker module (default: ${shownPath(workersDir)})
What a tool folder may hold: ${docsPath('tools.md')}`);
    return 0;
  }
  const modes = (['sync', 'async', 'both'] as const).filter((mode) => values[mode]);
  const name = positionals[0];
  if (positionals.length !== 1 || !name || modes.length > 1) {
    console.error(USAGE);
    return 2;
  }
  if (values.durable && (values.jsonata || values.worker)) {
    console.error(`--jsonata and --worker are for a state machine tool; a durable tool (--durable) is its own code\n${USAGE}`);
    return 2;
  }
  if (!TOOL_NAME.test(name)) {
    console.error(`"${name}" is not a tool name: 1-128 characters of A-Z, a-z, 0-9, _ . -`);
    return 2;
  }
  try {
    const files = scaffoldTool({
      name,
      invocation: modes[0] ?? 'async',
      jsonata: values.jsonata ?? false,
      worker: values.worker ?? false,
      input: values.input ?? false,
      durable: values.durable ?? false,
      toolsDir,
      workersDir,
    });
    for (const file of files) console.log(`created ${relative(process.cwd(), file)}`);
    console.log('next: edit them, then `npm run validate-tools` and `npm start` (or `cdk deploy`)');
    return 0;
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
}

process.exitCode = main();
