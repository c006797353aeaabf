/**
 * The operation card as deployed: the synthesized assembly (auth=none) run locally, its MCP
 * function serving the card it was bundled with (operation-card.html in its asset), rendered
 * by the same browser host and driven through the same scenarios as on the local stack. The
 * function keeps its template's bounds, so the host's calls wait up to the tools' sync
 * timeout while the card follows the operation by the call's request id.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../local/as-deployed/start-deployed-stack.ts';
import { buildOperationCardHtml } from '../../lambdas/mcp/apps/build-operation-card.ts';
import { CARD_ASSET_FILE } from '../../lambdas/mcp/apps/card-resource.ts';
import { CHROMIUM, startAppsHost, type AppsHost } from '../support/apps-host/apps-host.ts';
import { analyzeDatasetCard, approveInCard, cancelFromCard, expectNothingLoadedByCards, exportCsvInCard } from '../support/apps-host/card-scenarios.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../support/deployed-assembly.ts';

const OUTPUT_DIR = resolve(import.meta.dirname, '../../test-results/operation-card-as-deployed');
const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)(
  `the operation card in a browser host, as deployed${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; apt-get install -y chromium)`}`,
  () => {
    let stack: DeployedLocalStack;
    let host: AppsHost;

    beforeAll(async () => {
      await mkdir(OUTPUT_DIR, { recursive: true });
      ({ stack } = await startAssemblyStack(await deployedAssembly(NO_AUTH)));
      host = await startAppsHost(stack.url);
    }, 300_000);
    afterAll(async () => {
      await host?.close();
      await stack?.close();
    });

    const context = () => ({ host, screenshots: OUTPUT_DIR });

    it('the MCP function serves the card its asset holds, built from the source at synth', async () => {
      const mcp = stack.model.functions.find((f) => f.logicalId === stack.model.functionUrl?.targetFunctionLogicalId);
      const asset = readFileSync(join(mcp?.assetDir ?? '', CARD_ASSET_FILE), 'utf8');
      expect(asset).toBe(buildOperationCardHtml());
      const read = await host.client.readResource({ uri: 'ui://async-mcp/operation' });
      expect((read.contents[0] as { text?: string }).text).toBe(asset);
    });

    it('analyze_dataset renders the card and completes with the statistics table', () => analyzeDatasetCard(context()), 180_000);
    it('Cancel on a long run ends it cancelled', () => cancelFromCard(context()), 180_000);
    it("approve_deployment's question is answered in the card", () => approveInCard(context()), 180_000);
    it('export_dataset shows a CSV preview', () => exportCsvInCard(context()), 180_000);
    it('the card loaded nothing', () => expectNothingLoadedByCards(host));
  },
);
