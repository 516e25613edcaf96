import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * Every relative link and anchor in the repository's Markdown resolves: the file or folder
 * exists, and an anchor (`#…`, `file.md#…`) names a heading of the target, spelled as GitHub
 * spells its ids.
 */

/** The Markdown files git tracks, and new ones it would (not ignored), outside node_modules. */
function markdownFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'], {
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && !file.split('/').includes('node_modules') && existsSync(file));
}

interface Line {
  text: string;
  number: number;
}

/** The lines outside fenced code blocks, as written, with their index in the file (from 0). */
function unfencedLines(markdown: string): { text: string; index: number }[] {
  const lines: { text: string; index: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    lines.push({ text, index });
  });
  return lines;
}

/** The lines outside fenced code blocks, with inline code spans blanked out. */
const proseLines = (markdown: string): Line[] =>
  unfencedLines(markdown).map(({ text, index }) => ({
    text: text.replace(/(`+)[^`]*?\1/g, ''),
    number: index + 1,
  }));

/**
 * A heading's id as GitHub makes it (github-slugger's rule): lower-cased, every character that
 * is not a letter, mark, digit, connector (`_`), hyphen or space dropped, spaces made hyphens.
 * github-slugger itself is not among the dependencies, and the rule fits in one line.
 */
const slug = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** A heading's text as it renders: code spans, links and images reduced to their text, emphasis and tags dropped. */
const renderedText = (heading: string): string =>
  heading
    .replace(/(`+)([^`]*?)\1/g, '$2')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
    .trim();

/** The anchors a Markdown file offers: its headings' ids (repeats get -1, -2, …) and explicit HTML ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slug(renderedText(heading));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = markdown.split('\n');
  for (const { text, index } of unfencedLines(markdown)) {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(text);
    if (atx) {
      add(atx[1] ?? '');
      continue;
    }
    const previous = lines[index - 1] ?? '';
    const setext =
      /^ {0,3}(=+|-+)\s*$/.test(text) &&
      previous.trim() !== '' &&
      !/^ {0,3}(#|\||[-*+>]\s|\d+[.)]\s)/.test(previous) &&
      !/^ {0,3}(=+|-+)\s*$/.test(previous);
    if (setext) add(previous);
    for (const [, id] of text.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(id);
  }
  return anchors;
}

interface Link {
  target: string;
  line: number;
}

/** Inline links and images, `[text](target "title")`, and reference definitions, `[id]: target`. */
function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { text, number } of proseLines(markdown)) {
    for (const [, target] of text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target, line: number });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(text);
    if (definition) links.push({ target: definition[1], line: number });
  }
  return links;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

function problemsOf(file: string, cache: Map<string, Set<string>>): string[] {
  const anchors = (path: string): Set<string> => {
    const known = cache.get(path) ?? anchorsOf(readFileSync(path, 'utf8'));
    cache.set(path, known);
    return known;
  };
  const problems: string[] = [];
  for (const { target, line } of linksOf(readFileSync(file, 'utf8'))) {
    if (isExternal(target)) continue;
    const where = `${file}:${line}: (${target})`;
    const hash = target.indexOf('#');
    const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const path =
      pathPart === '' ? file : normalize(pathPart.startsWith('/') ? `.${pathPart}` : join(dirname(file), pathPart));
    if (path.startsWith('..')) {
      problems.push(`${where} leaves the repository`);
      continue;
    }
    if (!existsSync(path)) {
      problems.push(`${where} points to ${path}, which does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(path).isDirectory() || !path.endsWith('.md')) continue;
    if (!anchors(path).has(anchor)) problems.push(`${where}: ${path} has no heading whose anchor is #${anchor}`);
  }
  return problems;
}

describe('Markdown links', () => {
  const files = markdownFiles();

  it('finds the Markdown files', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'SECURITY.md']));
  });

  it('resolve: every relative link names a file that exists, and every anchor a heading of it', () => {
    const cache = new Map<string, Set<string>>();
    expect(files.flatMap((file) => problemsOf(file, cache))).toEqual([]);
  });
});

describe('the anchor of a heading', () => {
  it.each([
    ['Behind a load balancer: `TRUST_PROXY`', 'behind-a-load-balancer-trust_proxy'],
    [
      'Least-privilege keys: permissions and address allowlists',
      'least-privilege-keys-permissions-and-address-allowlists',
    ],
    ["The region's events", 'the-regions-events'],
    [
      'What common/, database/ and test/support/ offer a new feature',
      'what-common-database-and-testsupport-offer-a-new-feature',
    ],
    ['ASVS 5.0 requirements', 'asvs-50-requirements'],
    ['A — B', 'a--b'],
  ])('%s is #%s', (heading, anchor) => {
    expect(anchorsOf(`## ${heading}\n`)).toEqual(new Set([anchor]));
  });

  it('numbers repeated headings as GitHub does', () => {
    expect(anchorsOf('# Notes\n## Notes\n### Notes\n')).toEqual(new Set(['notes', 'notes-1', 'notes-2']));
  });

  it('ignores lines in fenced code', () => {
    expect(anchorsOf('```sh\n# a comment\n```\n## Real\n')).toEqual(new Set(['real']));
  });
});
