/**
 * The host's look, applied to the card: its light or dark theme, its CSS variables (the
 * standard `--color-*`, `--font-*`, `--border-radius-*` names; the stylesheet falls back
 * to its own values for any it leaves out) and its container size. Host font CSS is not
 * applied: it may load fonts from elsewhere, and the card makes no request of its own.
 */
import type { McpUiHostContext } from '@modelcontextprotocol/ext-apps';

/** Applies what `context` sets; fields it leaves out keep their current value. */
export function applyHostContext(context: McpUiHostContext): void {
  const root = document.documentElement;
  if (context.theme === 'light' || context.theme === 'dark') {
    root.dataset.theme = context.theme;
    // `light-dark()` in the host's variables and in ours picks the host's theme.
    root.style.colorScheme = context.theme;
  }
  for (const [name, value] of Object.entries(context.styles?.variables ?? {})) {
    if (name.startsWith('--') && typeof value === 'string') root.style.setProperty(name, value);
  }
  const dimensions = context.containerDimensions as Record<string, number | undefined> | undefined;
  if (dimensions) {
    // Fixed: fill the container. Flexible: size to the content, up to the maximum.
    if (typeof dimensions.height === 'number') root.style.height = '100vh';
    else if (typeof dimensions.maxHeight === 'number') root.style.maxHeight = `${dimensions.maxHeight}px`;
    if (typeof dimensions.width === 'number') root.style.width = '100vw';
    else if (typeof dimensions.maxWidth === 'number') root.style.maxWidth = `${dimensions.maxWidth}px`;
  }
}
