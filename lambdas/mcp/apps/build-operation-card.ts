/**
 * Builds the operation card into one self-contained HTML document: the page template with
 * its script (esbuild, minified, for browsers) and its stylesheet inlined. Nothing is
 * fetched when it runs: the host's default CSP allows inline script and style only.
 * Synchronous, so the CDK app can run it while it bundles; a development server runs it
 * once, on the first read.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const SOURCE_DIR = fileURLToPath(new URL('./operation-card/', import.meta.url));
const SCRIPT_SLOT = '<!--card-script-->';
const STYLE_SLOT = '<!--card-style-->';
/** Browsers every MCP Apps host embeds (evergreen Chromium, WebKit and Gecko). */
const BROWSER_TARGETS = ['chrome120', 'safari17', 'firefox121'];

/** The card's HTML, with its script and stylesheet inline. */
export function buildOperationCardHtml(): string {
  const script = bundle('card.ts');
  const style = bundle('card.css');
  const template = readFileSync(`${SOURCE_DIR}index.html`, 'utf8');
  if (!template.includes(SCRIPT_SLOT) || !template.includes(STYLE_SLOT)) throw new Error('index.html lacks the card script or style slot');
  // Replacer functions: `$` in the minified script must not read as a replacement pattern.
  return template.replace(STYLE_SLOT, () => `<style>${style}</style>`).replace(SCRIPT_SLOT, () => `<script>${script}</script>`);
}

function bundle(entry: string): string {
  const result = buildSync({
    entryPoints: [`${SOURCE_DIR}${entry}`],
    bundle: true,
    minify: true,
    write: false,
    platform: 'browser',
    format: 'iife',
    target: BROWSER_TARGETS,
    legalComments: 'none',
    // esbuild escapes `</script` and `</style` in what it emits for inline use.
    supported: { 'inline-script': true, 'inline-style': true },
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  return output.text.trim();
}
