// The README and the docs/ pages link to each other and to files of the repository. A page that
// moves or a heading that is renamed breaks those links silently on GitHub and npm, so every
// relative link is checked here: the file must exist, and a #fragment must name a heading of it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Markdown text without fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative link targets of a page (inline links and images), without web, mail or bare-anchor ones. */
function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

interface Broken {
  page: string;
  link: string;
  why: string;
}

function brokenLinks(pagePath: string): Broken[] {
  const page = relative(root, pagePath);
  const text = readFileSync(pagePath, 'utf8');
  const broken: Broken[] = [];
  for (const link of relativeLinks(text)) {
    const [pathPart = '', fragment] = link.split('#', 2);
    const target = pathPart === '' ? pagePath : resolve(dirname(pagePath), decodeURIComponent(pathPart));
    if (!existsSync(target)) {
      broken.push({ page, link, why: `no file ${relative(root, target)}` });
      continue;
    }
    if (fragment !== undefined && fragment !== '') {
      if (statSync(target).isDirectory() || !target.endsWith('.md')) {
        broken.push({ page, link, why: 'a #fragment on something that is not a markdown page' });
      } else if (!anchorsOf(readFileSync(target, 'utf8')).has(decodeURIComponent(fragment))) {
        broken.push({ page, link, why: `no heading #${fragment} in ${relative(root, target)}` });
      }
    }
  }
  return broken;
}

const pages = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
];

describe('heading anchors are made the way GitHub makes them', () => {
  it('drops punctuation and code marks, turns spaces into dashes and numbers repeats', () => {
    const anchors = anchorsOf(
      [
        '# Run it as a child bridge (recommended)',
        '## Tailscale Funnel (no domain, no open ports)',
        '### The published package (`test/e2e/package.test.ts`)',
        '## Check that it works: the health route and the self-check',
        '```sh',
        '# not a heading',
        '```',
        '## Locks',
        '## Locks',
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'run-it-as-a-child-bridge-recommended',
      'tailscale-funnel-no-domain-no-open-ports',
      'the-published-package-teste2epackagetestts',
      'check-that-it-works-the-health-route-and-the-self-check',
      'locks',
      'locks-1',
    ]);
  });
});

describe('every relative link in README.md and docs/*.md points to a file and heading that exist', () => {
  it('finds the pages and their links', () => {
    expect(pages.length).toBeGreaterThan(1);
    expect(relativeLinks(readFileSync(join(root, 'README.md'), 'utf8')).length).toBeGreaterThan(10);
  });

  it.each(pages.map((p) => [relative(root, p), p] as const))('%s', (_name, pagePath) => {
    expect(brokenLinks(pagePath)).toEqual([]);
  });
});
