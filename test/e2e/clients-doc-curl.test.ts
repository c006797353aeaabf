/**
 * docs/clients.md's curl sessions, read out of the page and run step by step against a local
 * stack: each answer comes in the form its comment shows, a `# data: …` line where the server
 * answers with Server-Sent Events and a plain `# {…}` where it answers with JSON (issue 41:
 * `tools/async/result` was shown as `data: {…}`). The one change is the URL.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { codeBlocks, page } from '../support/markdown-blocks.ts';

const run = promisify(execFile);
const DOC_URL = 'http://127.0.0.1:3000/mcp';

interface Step {
  command: string;
  /** The comment lines after the command, without their `# `. */
  comment: string[];
}

/** The block's setup lines (before its first curl) and each curl command with the comment after it. */
function stepsOf(text: string): { prelude: string; steps: Step[] } {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => line.startsWith('curl'));
  const prelude = lines
    .slice(0, first)
    .filter((line) => !line.startsWith('#'))
    .join('\n');
  const steps: Step[] = [];
  for (let i = first; i < lines.length; i++) {
    if (!lines[i]?.startsWith('curl')) continue;
    const command: string[] = [];
    for (; i < lines.length && lines[i]?.trim() !== '' && !lines[i]?.startsWith('#'); i++) command.push(lines[i] ?? '');
    const comment: string[] = [];
    for (; i < lines.length && lines[i]?.startsWith('# '); i++) comment.push((lines[i] ?? '').slice(2));
    steps.push({ command: command.join('\n'), comment });
    i--;
  }
  return { prelude, steps };
}

const sessions = codeBlocks(page('docs/clients.md')).filter((block) => block.text.includes('$MCP') && block.text.includes('curl'));

describe("docs/clients.md's curl sessions", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('are on the page', () => {
    expect(sessions.length).toBeGreaterThanOrEqual(2);
  });

  it.each(sessions.map((block, index) => [index + 1, block.text] as const))(
    'session %i: every answer comes in the form its comment shows (SSE data: lines, or plain JSON)',
    async (_index, text) => {
      // A later session runs in the shell of the first, with its MCP and H.
      const first = stepsOf(sessions[0]!.text.replaceAll(DOC_URL, stack.url.href)).prelude;
      const { prelude: own, steps } = stepsOf(text.replaceAll(DOC_URL, stack.url.href));
      const prelude = own.trim() === '' ? first : own;
      const bash = async (script: string) => (await run('bash', ['-c', `${prelude}\n${script}`], { timeout: 60_000 })).stdout;
      const shown = steps.filter((step) => /^(data: )?\{/.test(step.comment[0] ?? ''));
      expect(shown.length).toBeGreaterThan(0);
      for (const step of steps) {
        // A reader fetches the result once the status says the run ended ("here after about 3 seconds").
        const status = steps.find((s) => s.command.includes('tools/async/status'));
        if (step.command.includes('tools/async/result') && status) {
          for (let output = await bash(status.command); /"status":"(working|input_required)"/.test(output); output = await bash(status.command)) {
            await new Promise((done) => setTimeout(done, 250));
          }
        }
        const output = await bash(step.command);
        const comment = step.comment[0] ?? '';
        if (!/^(data: )?\{/.test(comment)) continue;
        const sse = /^data: /m.test(output);
        expect({ command: step.command.split('\n')[0], sse }, output).toEqual({ command: step.command.split('\n')[0], sse: comment.startsWith('data: ') });
      }
    },
  );
});
