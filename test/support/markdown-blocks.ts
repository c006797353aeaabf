/**
 * Code blocks read out of the docs' own text, so tests run the examples a reader copies
 * (STYLE rule 10: README examples must actually run), not a copy kept beside them.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');

/** One fenced block: its info string's language, its text, and the prose line just before it. */
export interface CodeBlock {
  lang: string;
  text: string;
  /** The last non-empty line before the fence, e.g. "`state-machines/word_count/tool.json`:". */
  label: string;
}

/** A page of the repository (e.g. `README.md`, `docs/tools.md`), as text. */
export function page(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/** Every fenced code block of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let label = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const open = /^(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (!open) {
      if (line.trim() !== '') label = line.trim();
      continue;
    }
    const [, fence = '```', lang = ''] = open;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').startsWith(fence); i++) body.push(lines[i] ?? '');
    blocks.push({ lang, text: `${body.join('\n')}\n`, label });
    label = '';
  }
  return blocks;
}

/**
 * The blocks a page introduces with the file they are: a label that names the path in
 * backticks and ends with a colon ("…`state-machines/word_count/tool.json`:", "`…/definition.asl.json`, calling…:"),
 * keyed by that path.
 */
export function fileBlocks(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const block of codeBlocks(markdown)) {
    const path = /`([\w./-]+\.\w+)`[^`]*:$/.exec(block.label)?.[1];
    if (path) files.set(path, block.text);
  }
  return files;
}

/**
 * Writes the word_count example of `pagePath` (its tool folder and its worker) into
 * `toolsDir` and `workersDir`, as a reader following the page would; returns the tool's name.
 */
export function writeWordCountExample(pagePath: string, toolsDir: string, workersDir: string): string {
  const files = fileBlocks(page(pagePath));
  const wanted = ['state-machines/word_count/tool.json', 'state-machines/word_count/definition.asl.json', 'lambdas/handlers/workers/count-words.ts'];
  for (const path of wanted) {
    const text = files.get(path);
    if (text === undefined) throw new Error(`${pagePath} shows no ${path}`);
    const target = path.startsWith('state-machines/')
      ? join(toolsDir, path.slice('state-machines/'.length))
      : join(workersDir, path.slice('lambdas/handlers/workers/'.length));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
  return 'word_count';
}
