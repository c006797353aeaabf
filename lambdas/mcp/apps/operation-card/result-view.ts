/**
 * A finished operation's result as the card shows it: structured content as a table, text
 * as text, a resource link as a preview of its first rows (CSV) with a download through the
 * host, and a tool error as an error with its message.
 */
import { h } from './dom.ts';
import type { HostBridge } from './host-bridge.ts';
import type { ToolResult } from './operation-ref.ts';

/** Rows of a CSV the preview shows. */
const PREVIEW_ROWS = 10;
/** Files larger than this are not read for a preview: the whole file would cross the bridge. */
const MAX_PREVIEW_BYTES = 2 * 1024 * 1024;

export interface ResultContext {
  bridge: HostBridge;
  locale?: string;
  /** Whether the host saves files for the card (`hostCapabilities.downloadFile`). */
  canDownload: boolean;
}

/** The result's section. */
export function resultView(result: ToolResult, context: ResultContext): HTMLElement {
  const blocks = Array.isArray(result.content) ? result.content.filter(isRecord) : [];
  const texts = blocks.filter((block) => block.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  if (result.isError === true) {
    return h(
      'section',
      { class: 'result error', role: 'alert', 'aria-labelledby': 'result-heading' },
      h('h2', { id: 'result-heading' }, 'The tool reported an error'),
      ...texts.map((text) => h('p', { class: 'error-text' }, text)),
    );
  }
  const structured = isRecord(result.structuredContent) ? result.structuredContent : undefined;
  const parts: Array<HTMLElement | undefined> = [];
  if (structured) parts.push(objectTable(structured, context.locale, 'Result'));
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') {
      // A text block that only repeats the structured content as JSON is not shown twice.
      if (!(structured && isJsonOf(block.text, structured))) parts.push(h('p', { class: 'result-text' }, block.text));
    } else if (block.type === 'resource_link' && typeof block.uri === 'string') {
      parts.push(resourceLinkView(block, context));
    } else if (block.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
      parts.push(h('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: 'Image the tool returned' }));
    } else if (block.type === 'resource' && isRecord(block.resource) && typeof block.resource.text === 'string') {
      parts.push(h('pre', { class: 'result-text' }, block.resource.text));
    }
  }
  return h('section', { class: 'result', 'aria-labelledby': 'result-heading' }, h('h2', { id: 'result-heading' }, 'Result'), ...parts);
}

/** An object as a two-column table; arrays of objects inside it as tables of their own. */
function objectTable(value: Record<string, unknown>, locale: string | undefined, caption: string): HTMLElement {
  const rows = Object.entries(value).map(([key, field]) => h('tr', {}, h('th', { scope: 'row' }, key), h('td', {}, cellOf(field, locale, key))));
  return h('table', { class: 'fields' }, h('caption', { class: 'visually-hidden' }, caption), h('tbody', {}, ...rows));
}

function cellOf(value: unknown, locale: string | undefined, key: string): Node | string {
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) return rowsTable(value, locale, key);
  if (isRecord(value)) return objectTable(value, locale, key);
  if (Array.isArray(value)) return value.map((item) => scalarText(item, locale)).join(', ');
  return scalarText(value, locale);
}

/** Rows of objects as a table with one column per key. */
function rowsTable(rows: Record<string, unknown>[], locale: string | undefined, caption: string): HTMLElement {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return h(
    'table',
    { class: 'rows' },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {}, ...columns.map((column) => h('td', {}, scalarText(row[column], locale)))))),
  );
}

function scalarText(value: unknown, locale: string | undefined): string {
  if (typeof value === 'number') return Number.isInteger(value) ? value.toLocaleString(locale) : value.toLocaleString(locale, { maximumFractionDigits: 4 });
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'boolean' ? (value ? 'yes' : 'no') : JSON.stringify(value);
}

/** A resource link: what it is, a download through the host, and for CSV the first rows. */
function resourceLinkView(link: Record<string, unknown>, context: ResultContext): HTMLElement {
  const name = typeof link.name === 'string' ? link.name : String(link.uri);
  const size = typeof link.size === 'number' ? link.size : undefined;
  const preview = h('div', { class: 'preview', 'aria-live': 'polite' });
  const download = context.canDownload
    ? h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => void context.bridge.downloadFile(link).catch(() => preview.prepend(h('p', { class: 'hint' }, 'The host did not save the file.'))),
        },
        `Download ${name}`,
      )
    : undefined;
  const section = h(
    'div',
    { class: 'resource-link' },
    h('p', {}, h('strong', {}, name), size === undefined ? '' : ` (${formatBytes(size, context.locale)})`),
    typeof link.description === 'string' ? h('p', { class: 'hint' }, link.description) : undefined,
    download,
    preview,
  );
  if (isCsv(link) && (size === undefined || size <= MAX_PREVIEW_BYTES)) void loadCsvPreview(String(link.uri), preview, context);
  return section;
}

async function loadCsvPreview(uri: string, into: HTMLElement, context: ResultContext): Promise<void> {
  into.append(h('p', { class: 'hint' }, 'Loading a preview…'));
  try {
    const read = await context.bridge.readServerResource(uri);
    const text = read.contents.find((content) => typeof content.text === 'string')?.text;
    if (text === undefined) throw new Error('no text');
    const lines = text.split(/\r?\n/).filter((line) => line !== '');
    const [header, ...rows] = lines.map(splitCsvLine);
    if (!header) throw new Error('empty');
    const shown = rows.slice(0, PREVIEW_ROWS);
    into.replaceChildren(
      h(
        'table',
        { class: 'rows csv' },
        h('caption', {}, `Preview: the first ${shown.length} of ${rows.length.toLocaleString(context.locale)} rows`),
        h('thead', {}, h('tr', {}, ...header.map((column) => h('th', { scope: 'col' }, column)))),
        h('tbody', {}, ...shown.map((row) => h('tr', {}, ...header.map((_, i) => h('td', {}, row[i] ?? ''))))),
      ),
    );
  } catch {
    into.replaceChildren(h('p', { class: 'hint' }, 'No preview: the file could not be read through the host.'));
  }
}

/** One CSV line's fields (RFC 4180 quoting). */
function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted && char === '"' && line[i + 1] === '"') {
      field += '"';
      i++;
    } else if (char === '"') {
      quoted = !quoted;
    } else if (char === ',' && !quoted) {
      fields.push(field);
      field = '';
    } else {
      field += char;
    }
  }
  fields.push(field);
  return fields;
}

function isCsv(link: Record<string, unknown>): boolean {
  return (
    (typeof link.mimeType === 'string' && link.mimeType.startsWith('text/csv')) || (typeof link.name === 'string' && link.name.toLowerCase().endsWith('.csv'))
  );
}

function formatBytes(bytes: number, locale: string | undefined): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const kib = bytes / 1024;
  return kib < 1024
    ? `${kib.toLocaleString(locale, { maximumFractionDigits: 1 })} KB`
    : `${(kib / 1024).toLocaleString(locale, { maximumFractionDigits: 1 })} MB`;
}

function isJsonOf(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
