/**
 * What a person does with the operation card in a browser host, one function per scenario,
 * so the local stack and the synthesized assembly run the very same steps. Each waits on what
 * the card shows, never on time.
 */
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { expect } from 'vitest';
import { expectedStats } from '../expected-stats.ts';
import type { AppsHost } from './apps-host.ts';

/** Long enough for every step the card takes to be seen: no assertion is on time. */
const STEP = { timeout: 90_000 };

export interface CardScenarioContext {
  host: AppsHost;
  /** Where screenshots go; none when absent. */
  screenshots?: string;
}

export const waitForStatus = (card: FrameLocator, value: string) => card.locator(`main[data-status="${value}"]`).waitFor(STEP);

async function screenshot(context: CardScenarioContext, name: string): Promise<void> {
  if (context.screenshots) await context.host.page.locator('#conversation').screenshot({ path: join(context.screenshots, `operation-card-${name}.png`) });
}

/** The result table's rows as [field, value] pairs. */
function fields(card: FrameLocator): Promise<string[][]> {
  return card
    .locator('table.fields > tbody > tr')
    .evaluateAll((rows) => rows.map((row) => [row.querySelector('th')?.textContent ?? '', row.querySelector('td')?.textContent ?? '']));
}

/** The tool's own structured result: the host's call answered with it, or with a handle the host then follows up. */
async function toolResultOf(host: AppsHost, answered: Record<string, unknown>): Promise<Record<string, unknown>> {
  const structured = (answered.structuredContent ?? {}) as Record<string, unknown>;
  if (typeof structured.operationId !== 'string' || typeof structured.status !== 'string') return structured;
  const result = await host.client.callTool({ name: 'operation_result', arguments: { operationId: structured.operationId, waitSeconds: 30 } });
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

export async function analyzeDatasetCard(context: CardScenarioContext): Promise<void> {
  const { host } = context;
  const run = await host.callWithCard('analyze_dataset', { rows: 300_000, seed: 7, delaySeconds: 1000 });
  await waitForStatus(run.card, 'working');
  await expect.poll(() => run.card.locator('h1').textContent()).toBe('Analyze a synthetic dataset');
  expect(await run.card.locator('.args').textContent()).toBe('rows: 300,000 · seed: 7 · delaySeconds: 1,000');
  expect(await run.card.getByRole('status').textContent()).toBe('Working');
  expect(await run.card.locator('.elapsed').textContent()).toMatch(/^Running for \d+ s$/);
  // The progress bar is labelled and has a text alternative.
  const bar = run.card.getByRole('progressbar', { name: 'Progress' });
  expect(await bar.getAttribute('aria-describedby')).toBe('progress-text');
  expect(await run.card.locator('#progress-text').textContent()).toBeTruthy();
  expect(await run.card.getByRole('button', { name: 'Cancel' }).isEnabled()).toBe(true);
  await screenshot(context, 'analyze-working');

  await waitForStatus(run.card, 'completed');
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
  await screenshot(context, 'analyze-completed');
  expect((await toolResultOf(host, await run.result)).count).toBe(300_000);
  // The card read the operation itself, through the host.
  expect(host.forwarded).toContain('operation_card_status');
}

export async function cancelFromCard(context: CardScenarioContext): Promise<void> {
  const { host } = context;
  const run = await host.callWithCard('analyze_dataset', { rows: 1000, delaySeconds: 86_400 });
  await waitForStatus(run.card, 'working');
  const operationId = await run.card.locator('main').getAttribute('data-operation-id');
  expect(operationId).toEqual(expect.any(String));
  await run.card.getByRole('button', { name: 'Cancel' }).click();
  await waitForStatus(run.card, 'canceled');
  expect(await run.card.getByRole('status').textContent()).toBe('Cancelled');
  await screenshot(context, 'cancelled');
  const checked = await host.client.callTool({ name: 'operation_status', arguments: { operationId } });
  expect((checked.structuredContent as { status: string }).status).toBe('canceled');
  // The host's own call ends too (by hand-off before the cancel, or with the cancelled run's error).
  await run.result;
}

/** Screenshots keep the names docs/apps.md shows for approve_deployment. */
const shotName = (tool: string) => (tool === 'approve_deployment' ? 'approve' : tool);

/** `tool` is approve_deployment or its durable twin: the card cannot tell them apart. */
export async function approveInCard(context: CardScenarioContext, tool = 'approve_deployment'): Promise<void> {
  const { host } = context;
  // The host's own form for the same question stays unanswered until the card has answered it.
  let dismissHostForm: (value: Record<string, unknown>) => void = () => undefined;
  host.onElicitation = () => new Promise((resolveForm) => (dismissHostForm = resolveForm));
  const changes = ['api: v2.3.1', 'web: v1.9.0'];
  const run = await host.callWithCard(tool, { environment: 'staging', changes }, 'dark');
  await waitForStatus(run.card, 'input_required');
  const form = run.card.getByRole('form', { name: 'The run asks' });
  expect(await form.locator('.question-message').textContent()).toBe('Deploy 2 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0');
  await run.card.getByLabel('Comment').fill('ship it');
  await screenshot(context, `${shotName(tool)}-question`);
  await form.getByRole('button', { name: 'Submit' }).click();
  await waitForStatus(run.card, 'completed');
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
  await screenshot(context, `${shotName(tool)}-completed`);
  dismissHostForm({ action: 'cancel' });
  // The host's call ends with the outcome the card's answer produced.
  expect((await toolResultOf(host, await run.result)).decision).toBe('accept');
}

export async function exportCsvInCard(context: CardScenarioContext): Promise<void> {
  const { host } = context;
  const before = host.downloads.length;
  const run = await host.callWithCard('export_dataset', { rows: 50, seed: 3 });
  await waitForStatus(run.card, 'completed');
  const preview = run.card.locator('table.csv');
  await preview.waitFor(STEP);
  expect(await preview.locator('caption').textContent()).toBe('Preview: the first 10 of 50 rows');
  expect(await preview.locator('thead th').allTextContents()).toEqual(['index', 'value']);
  expect(await preview.locator('tbody tr').count()).toBe(10);
  await screenshot(context, 'export-csv');
  await run.card.getByRole('button', { name: /^Download dataset-50-rows-seed-3\.csv/ }).click();
  await expect.poll(() => host.downloads.length).toBe(before + 1);
  expect(host.downloads.at(-1)).toMatchObject({ contents: [{ type: 'resource_link', mimeType: 'text/csv' }] });
}

/** Every request was the host page or the sandbox proxy, on loopback; no CSP violation was reported. */
export function expectNothingLoadedByCards(host: AppsHost): void {
  const paths = host.requests.map((url) => new URL(url).pathname);
  expect(new Set(paths)).toEqual(new Set(['/host.html', '/host.js', '/sandbox.html']));
  for (const url of host.requests) expect(new URL(url).hostname).toBe('127.0.0.1');
  expect(host.cspReports).toEqual([]);
}
