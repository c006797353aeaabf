/**
 * The operation card in a real browser: headless Chromium renders it in a test host built
 * on the SDK's own host side (`AppBridge`, through a sandbox proxy on another origin with the
 * CSP the card declared), whose MCP client (SDK v2, 2026-07-28, declaring MCP Apps and
 * elicitation forms) talks to the local stack. The host has no async support, so it is served
 * handle tools, as chat hosts without task support are. Screenshots go to test-results/operation-card/.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { DEFAULT_LIMITS } from '../../lambdas/operations/operations-limits.ts';
import { CHROMIUM, startAppsHost, type AppsHost } from '../support/apps-host/apps-host.ts';
import { analyzeDatasetCard, approveInCard, cancelFromCard, expectNothingLoadedByCards, exportCsvInCard } from '../support/apps-host/card-scenarios.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const OUTPUT_DIR = resolve(import.meta.dirname, '../../test-results/operation-card');

const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)(
  `the operation card in a browser host, on the local stack${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`,
  () => {
    let stack: LocalStack;
    let host: AppsHost;

    beforeAll(async () => {
      await mkdir(OUTPUT_DIR, { recursive: true });
      // Wait states at 1/100: a "1000 s" delay takes 10 s. Calls hand off after 2 s, so the card
      // follows each operation on its own once the host's call has answered with a handle.
      stack = await startTestStack({ waitTimeScale: 0.01, limits: { ...DEFAULT_LIMITS, maxBlockingSeconds: 2 } });
      host = await startAppsHost(stack.url);
    }, 120_000);
    afterAll(async () => {
      await host?.close();
      await stack?.close();
    });

    const context = () => ({ host, screenshots: OUTPUT_DIR });

    it('analyze_dataset renders the card: its title, arguments, status and elapsed time while it works, then the statistics table', () =>
      analyzeDatasetCard(context()));
    it('Cancel on a long run ends it cancelled, on the server too', () => cancelFromCard(context()));
    it("approve_deployment's question is answered in the card, in the host's dark theme, and the outcome shows", () => approveInCard(context()));
    it('approve_deployment_durable, a durable function, asks and ends in the card as its state machine twin does', () =>
      approveInCard(context(), 'approve_deployment_durable'));
    it('export_dataset shows its CSV as a download and a preview of the first rows, read through the host', () => exportCsvInCard(context()));
    it('the card loaded nothing: every request was the host page or the sandbox proxy, and no CSP violation was reported', () =>
      expectNothingLoadedByCards(host));
  },
);
