/** Every relative link in the README, CONTRIBUTING.md and docs/ names a file that exists and, with an #anchor, a heading in it. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

/** The page's text with fenced code blocks and inline code blanked, so neither links nor headings are read from code. */
function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    if (marker !== undefined) {
      fence = marker;
      return '';
    }
    return line.replace(/`[^`]*`/g, (code) => (/^#/.test(line) ? code : ' '));
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  readonly page: string;
  readonly line: number;
  readonly target: string;
}

function linksOf(page: string): Link[] {
  const links: Link[] = [];
  prose(readFileSync(join(root, page), 'utf8')).forEach((text, index) => {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like are not ours to check
      links.push({ page, line: index + 1, target });
    }
  });
  return links;
}

/** What is wrong with a link, or undefined when it resolves. */
function problemWith(link: Link): string | undefined {
  const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(root, link.page) : resolve(dirname(join(root, link.page)), decodeURI(path));
  if (!existsSync(file)) return `${relative(root, file)} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md') || statSync(file).isDirectory()) return `#${anchor} points into ${relative(root, file)}, which has no headings`;
  return anchorsOf(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `${relative(root, file)} has no heading #${anchor}`;
}

describe('documentation links', () => {
  it('reads links out of every page', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', join('docs', 'clients.md')]));
    expect(pages.flatMap(linksOf).length).toBeGreaterThan(20);
  });

  it.each(pages)('every relative link and #anchor in %s resolves', (page) => {
    const broken = linksOf(page).flatMap((link) => {
      const problem = problemWith(link);
      return problem === undefined ? [] : [`${link.page}:${link.line} (${link.target}): ${problem}`];
    });
    expect(broken).toEqual([]);
  });
});

describe('GitHub-style anchors', () => {
  it('drops punctuation, keeps hyphens, and numbers repeated headings', () => {
    const anchors = anchorsOf('# Reliability: what is guaranteed\n## Connect to a `NONE` URL for trials\n## Logs\n## Logs\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['reliability-what-is-guaranteed', 'connect-to-a-none-url-for-trials', 'logs', 'logs-1']);
  });

  it('finds a broken link and a broken anchor', () => {
    expect(problemWith({ page: 'README.md', line: 1, target: 'docs/no-such-page.md' })).toMatch(/does not exist/);
    expect(problemWith({ page: 'README.md', line: 1, target: '#no-such-heading' })).toMatch(/no heading #no-such-heading/);
  });
});
