/**
 * The test `new-tool` writes beside a new tool: it calls the tool through `async-mcp/testing`
 * (the local stack in the test's process) and checks the scaffold's echo; for a tool that asks
 * (`--input`), it answers the question, once accepting and once declining.
 *
 * Where it goes: the tools folder's parent is the project (it holds package.json). A project
 * keeps it in `test/<tool>.test.ts`; this repository, whose tool tests are end-to-end tests, in
 * `test/e2e/<tool>.test.ts`, with the kit imported from source. Without such a folder (tools
 * written elsewhere, a project without `test/`), no test is written.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/** What the test depends on of the scaffold. */
export interface ToolTestFileOptions {
  name: string;
  /** The tool asks the client to confirm first (question key `confirm`). */
  input: boolean;
  durable: boolean;
  toolsDir: string;
  workersDir: string;
}

/** The name this repository's package.json has: there, tests import the kit from source. */
const OUR_PACKAGE = 'async-mcp';

/** The test file for the new tool and its text, or `undefined` when the tools are not a project's with a tests folder. */
export function toolTestFile(options: ToolTestFileOptions): [file: string, text: string] | undefined {
  const root = dirname(options.toolsDir);
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const ours = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === OUR_PACKAGE;
  const testsDir = ours ? join(root, 'test', 'e2e') : join(root, 'test');
  if (!existsSync(testsDir)) return undefined;
  const file = join(testsDir, `${options.name}.test.ts`);
  if (existsSync(file)) throw new Error(`${file} already exists`);
  const tools = relative(root, options.toolsDir).split(sep).join('/');
  const workers = relative(root, options.workersDir).split(sep).join('/');
  const serverOptions = {
    ...(tools === 'state-machines' ? {} : { tools }),
    // A project's default is ./workers, this repository's the stack's own (lambdas/handlers/workers).
    ...(workers === (ours ? 'lambdas/handlers/workers' : 'workers') ? {} : { workers }),
  };
  return [file, testText(options, ours ? '../../testing/index.ts' : 'async-mcp/testing', serverOptions)];
}

const ANSWERS_NOTE = `
 * \`answers\` answers its questions by key: { confirm: { ... } } accepts with that content;
 * 'decline' and 'cancel' answer so; a question it leaves unanswered fails the call.`;

/** The test's source. */
export function testText(options: Pick<ToolTestFileOptions, 'name' | 'input' | 'durable'>, kit: string, serverOptions: Record<string, string> = {}): string {
  const { name } = options;
  // Tool names are letters, digits and _ . - only: safe in single quotes.
  const tool = `'${name}'`;
  const start = Object.keys(serverOptions).length > 0 ? `startTestServer(${jsObject(serverOptions)})` : 'startTestServer()';
  const kind = options.durable ? 'a durable function' : 'a state machine';
  const calls = options.input
    ? `
it('asks to confirm, then echoes the text', async () => {
  const run = await server.call(${tool}, { text: 'hello' }, { answers: { confirm: {} } });
  expect(run.questions.map((question) => [question.key, question.message])).toEqual([['confirm', 'Echo "hello"?']]);
  expect(run.result.structuredContent).toEqual({ echo: 'hello' });
}, 60_000);

it('does nothing when the user declines, and says so as a tool error', async () => {
  const run = await server.call(${tool}, { text: 'hello' }, { answers: { confirm: 'decline' } });
  expect(run.result.isError).toBe(true);
}, 60_000);
`
    : `
it('echoes the text', async () => {
  const run = await server.call(${tool}, { text: 'hello' });
  expect(run.result.structuredContent).toEqual({ echo: 'hello' });
}, 60_000);
`;
  return `/**
 * ${name} (${kind}), called through the local stack in this test's process, as an MCP client
 * calls it. Replace the calls and their expectations as the tool grows.${options.input ? ANSWERS_NOTE : ''}
 */
import { startTestServer, type TestServer } from '${kit}';
import { afterAll, beforeAll, expect, it } from 'vitest';

let server: TestServer;
beforeAll(async () => {
  server = await ${start};
}, 120_000);
afterAll(async () => {
  await server?.close();
});
${calls}`;
}

function jsObject(value: Record<string, string>): string {
  return `{ ${Object.entries(value)
    .map(([key, text]) => `${key}: ${JSON.stringify(text)}`)
    .join(', ')} }`;
}
