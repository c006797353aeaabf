/**
 * The operation card in a real browser: headless Chromium renders it in a test host built
 * on the SDK's own host side (`AppBridge`, through a sandbox proxy on another origin with the
 * CSP the card declared), whose MCP client (SDK v2, 2026-07-28, declaring MCP Apps and
 * elicitation forms) talks to the local stack. The host has no async support, so it is served
 * handle tools, as ChatGPT and Claude are. Screenshots go to test-results/operation-card/.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-limits.ts';
import { CHROMIUM, startAppsHost, type AppsHost } from '../support/apps-host/apps-host.ts';
import { expectedStats } from '../support/expected-stats.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const OUTPUT_DIR = resolve(import.meta.dirname, '../../test-results/operation-card');
/** Long enough for every step the card takes to be seen: no assertion is on time. */
const STEP = { timeout: 60_000 };

const hasChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';

// In CI the browser is part of the job: its absence is a failure, never a skip.
it.runIf(inCi && !hasChromium)(`${CHROMIUM} is installed in CI (apt-get install -y chromium)`, () => {
  expect(existsSync(CHROMIUM)).toBe(true);
});

describe.skipIf(!hasChromium)(`the operation card in a browser host${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`, () => {
  let stack: LocalStack;
  let host: AppsHost;

  beforeAll(async () => {
    await mkdir(OUTPUT_DIR, { recursive: true });
    // Wait states at 1/100: a "1000 s" delay takes 10 s. Calls hand off after 2 s.
    stack = await startTestStack({ waitTimeScale: 0.01, limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 2 } });
    host = await startAppsHost(stack.url);
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await stack?.close();
  });

  const status = (card: FrameLocator, value: string) => card.locator(`main[data-status="${value}"]`).waitFor(STEP);
  const screenshot = (name: string) => host.page.locator('#conversation').screenshot({ path: join(OUTPUT_DIR, `operation-card-${name}.png`) });
  /** The result table's rows as [field, value] pairs. */
  const fields = (card: FrameLocator) =>
    card.locator('table.fields > tbody > tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')?.textContent ?? '', row.querySelector('td')?.textContent ?? '']));

  it('analyze_dataset renders the card: its title, arguments, status and elapsed time while it works, then the statistics table', async () => {
    const run = await host.callWithCard('analyze_dataset', { rows: 300_000, seed: 7, delaySeconds: 1000 });
    await status(run.card, 'working');
    await expect.poll(() => run.card.locator('h1').textContent()).toBe('Analyze a synthetic dataset');
    expect(await run.card.locator('.args').textContent()).toBe('rows: 300,000 · seed: 7 · delaySeconds: 1,000');
    expect(await run.card.getByRole('status').textContent()).toBe('Working');
    expect(await run.card.locator('.elapsed').textContent()).toMatch(/^Running for \d+ s$/);
    // The progress bar is labelled and has a text alternative.
    const bar = run.card.getByRole('progressbar', { name: 'Progress' });
    expect(await bar.getAttribute('aria-describedby')).toBe('progress-text');
    expect(await run.card.locator('#progress-text').textContent()).toBeTruthy();
    expect(await run.card.getByRole('button', { name: 'Cancel' }).isEnabled()).toBe(true);
    await screenshot('analyze-working');

    await status(run.card, 'completed');
    const stats = expectedStats(300_000, 7);
    const shown = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 4 });
    expect(await fields(run.card)).toEqual([
      ['count', '300,000'],
      ['mean', shown(stats.mean)],
      ['min', shown(stats.min)],
      ['max', shown(stats.max)],
      ['stddev', shown(stats.stddev)],
    ]);
    expect(await run.card.locator('.elapsed').textContent()).toMatch(/^Took \d+ s$/);
    expect(await run.card.getByRole('button', { name: 'Cancel' }).isHidden()).toBe(true);
    await screenshot('analyze-completed');
    // The host's own call was handed off at its bound: the card polled the operation itself.
    expect(((await run.result).structuredContent as Record<string, unknown>).operationId).toEqual(expect.any(String));
    expect(host.forwarded).toContain('operation_card_status');
  });

  it('Cancel on a long run ends it cancelled, on the server too', async () => {
    const run = await host.callWithCard('analyze_dataset', { rows: 1000, delaySeconds: 86_400 });
    await status(run.card, 'working');
    const handle = (await run.result).structuredContent as { operationId: string };
    await run.card.getByRole('button', { name: 'Cancel' }).click();
    await status(run.card, 'canceled');
    expect(await run.card.getByRole('status').textContent()).toBe('Cancelled');
    await screenshot('cancelled');
    const checked = await host.client.callTool({ name: 'operation_status', arguments: { operationId: handle.operationId } });
    expect((checked.structuredContent as { status: string }).status).toBe('canceled');
  });

  it("approve_deployment's question is answered in the card, in the host's dark theme, and the outcome shows", async () => {
    // The host's own form for the same question stays unanswered until the card has answered it.
    let dismissHostForm: (value: Record<string, unknown>) => void = () => undefined;
    host.onElicitation = () => new Promise((resolveForm) => (dismissHostForm = resolveForm));
    const changes = ['api: v2.3.1', 'web: v1.9.0'];
    const run = await host.callWithCard('approve_deployment', { environment: 'staging', changes }, 'dark');
    await status(run.card, 'input_required');
    const form = run.card.getByRole('form', { name: 'The run asks' });
    expect(await form.locator('.question-message').textContent()).toBe('Deploy 2 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0');
    // Labelled fields, in focus order after the message: the comment, then Submit and Decline.
    await run.card.getByLabel('Comment').fill('ship it');
    await screenshot('approve-question');
    await form.getByRole('button', { name: 'Submit' }).click();
    await status(run.card, 'completed');
    expect(await fields(run.card)).toEqual(
      expect.arrayContaining([
        ['deployed', 'yes'],
        ['decision', 'accept'],
        ['comment', 'ship it'],
        ['summary', 'Deployed 2 changes to staging. Comment: ship it'],
      ]),
    );
    const steps = await run.card.locator('table.rows tbody tr').evaluateAll((rows) => rows.map((row) => row.textContent));
    expect(steps).toEqual(['1api: v2.3.1deployed', '2web: v1.9.0deployed']);
    await screenshot('approve-completed');
    dismissHostForm({ action: 'cancel' });
    // The host's call ends with the outcome the card's answer produced.
    expect(((await run.result).structuredContent as Record<string, unknown>).decision).toBe('accept');
  });

  it('export_dataset shows its CSV as a download and a preview of the first rows, read through the host', async () => {
    const run = await host.callWithCard('export_dataset', { rows: 50, seed: 3 });
    await status(run.card, 'completed');
    const preview = run.card.locator('table.csv');
    await preview.waitFor(STEP);
    expect(await preview.locator('caption').textContent()).toBe('Preview: the first 10 of 50 rows');
    expect(await preview.locator('thead th').allTextContents()).toEqual(['index', 'value']);
    expect(await preview.locator('tbody tr').count()).toBe(10);
    await screenshot('export-csv');
    await run.card.getByRole('button', { name: /^Download dataset-50-rows-seed-3\.csv/ }).click();
    await expect.poll(() => host.downloads.length).toBe(1);
    expect(host.downloads[0]).toMatchObject({ contents: [{ type: 'resource_link', mimeType: 'text/csv' }] });
  });

  it('the card loaded nothing: every request was the host page or the sandbox proxy, and no CSP violation was reported', () => {
    const paths = host.requests.map((url) => new URL(url).pathname);
    expect(new Set(paths)).toEqual(new Set(['/host.html', '/host.js', '/sandbox.html']));
    for (const url of host.requests) expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(host.cspReports).toEqual([]);
  });
});
