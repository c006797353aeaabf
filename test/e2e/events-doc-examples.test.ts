/**
 * docs/mcp-events.md's examples, read out of the page and run with bash as a reader pastes
 * them (issue 41: the poll example carried a `"…": "…"` placeholder in `_meta` and got HTTP
 * 400, and without the Mcp-Method header `-32020`). The changes a test makes: the URLs (the
 * server's, and the webhook endpoint's), and the subscribe block's two sign-in lines, whose
 * token the test gets as a signed-in user would and hands over in TOKEN.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { auth } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { DEV_MCP_SCOPE } from '../../local/oauth/dev-authorization-server.ts';
import { startLocalStackWithDevAuthorization, type LocalStackWithDevAuthorization } from '../../local/oauth/local-stack-with-dev-authorization.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { codeBlocks, page } from '../support/markdown-blocks.ts';
import { MemoryOAuthProvider, signInWithFetch } from '../support/oauth-dev-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const run = promisify(execFile);
const DOC_URL = 'http://127.0.0.1:3000/mcp';
const DOC_HOOK = 'http://127.0.0.1:8787/hooks';
const blocks = codeBlocks(page('docs/mcp-events.md'));

function blockFor(method: string): string {
  const found = blocks.filter((block) => block.lang === 'bash' && block.text.includes(`"method":"${method}"`));
  expect(found, `one bash block calling ${method}`).toHaveLength(1);
  return found[0]!.text;
}

/** What bash prints for `text`, as one JSON-RPC message (the answers are plain JSON). */
async function pasted(text: string, env: Record<string, string> = {}): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const { stdout } = await run('bash', ['-c', text], { env: { ...process.env, ...env }, timeout: 60_000 });
  const lines = stdout.split('\n').filter((line) => line.startsWith('{'));
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

describe('docs/mcp-events.md on npm start', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('the events/list example, pasted, lists the event types', async () => {
    const answer = await pasted(blockFor('events/list').replaceAll(DOC_URL, stack.url.href));
    expect(answer.error).toBeUndefined();
    const names = ((answer.result?.events ?? []) as Array<{ name: string }>).map((event) => event.name);
    expect(names).toEqual(expect.arrayContaining(['operation.finished', 'operation.input_required', 'operation.progress']));
  });

  it('the events/poll example, pasted, answers no events and a cursor to poll with', async () => {
    const answer = await pasted(blockFor('events/poll').replaceAll(DOC_URL, stack.url.href));
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ events: [], cursor: expect.any(String), truncated: false, hasMore: false, nextPollMs: expect.any(Number) });
  });
});

describe('docs/mcp-events.md on npm start -- --oauth-dev', () => {
  let stack: LocalStackWithDevAuthorization;
  let receiver: WebhookReceiver;
  let token = '';
  beforeAll(async () => {
    stack = await startLocalStackWithDevAuthorization({ toolsDir: 'state-machines', port: 0 }, { announce: () => undefined });
    receiver = await startWebhookReceiver();
    receiver.handle = async (request) => {
      const body = (await request.json()) as Record<string, unknown>;
      return body.type === 'verification' ? Response.json({ challenge: body.challenge }) : new Response(null, { status: 204 });
    };
    const provider = new MemoryOAuthProvider('events doc examples');
    expect(await auth(provider, { serverUrl: stack.url, scope: DEV_MCP_SCOPE })).toBe('REDIRECT');
    const pages = await signInWithFetch(provider.authorizationUrls[0] as URL, 'alice');
    expect(
      await auth(provider, { serverUrl: stack.url, authorizationCode: pages.callback.get('code') as string, iss: pages.callback.get('iss') as string }),
    ).toBe('AUTHORIZED');
    token = (provider.savedTokens as { access_token: string }).access_token;
  });
  afterAll(async () => {
    await stack?.drainEvents();
    await stack?.close();
    await receiver?.close();
  });

  it('the events/subscribe example, pasted with a signed-in token, verifies the endpoint and subscribes', async () => {
    const text = blockFor('events/subscribe')
      .split('\n')
      .filter((line) => !line.startsWith('npm run cli -- login ') && !line.startsWith('TOKEN=$('))
      .join('\n')
      .replaceAll(DOC_URL, stack.url.href)
      .replaceAll(DOC_HOOK, `${receiver.origin}/hooks`);
    const answer = await pasted(text, { TOKEN: token });
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ id: expect.stringMatching(/^sub_[0-9a-f]{32}$/), cursor: expect.any(String) });
    await vi.waitFor(() => expect(receiver.posts.filter((post) => post.path === '/hooks' && post.body.includes('"verification"'))).toHaveLength(1));
  });
});
