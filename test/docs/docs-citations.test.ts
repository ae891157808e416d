/**
 * The administrator's docs cite only files a reader can open: a path in backticks (`src/…/x.ts`) is
 * relative to the repository root, a link is relative to the page. The contract the service follows is
 * not in the repository, so the docs state its rules themselves instead of pointing at its file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const FILE = /^[\w.-]+(\/[\w.-]+)+\.(md|ts|js|mjs|json|yaml)$/;

function cited(page: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
  const quoted = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!).filter((p) => FILE.test(p));
  const linked = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
    .map((m) => m[1]!)
    .filter((p) => !/^[a-z]+:/.test(p))
    .map((p) => path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, page)), p)));
  return [...new Set([...quoted, ...linked])];
}

describe('docs cite files that exist', () => {
  it.each(PAGES)('%s', (page) => {
    const missing = cited(page).filter((p) => !fs.existsSync(path.join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  it('docs/pagination.md does not send the reader to the specification file, which is not in the repository', () => {
    const text = fs.readFileSync(path.join(ROOT, 'docs/pagination.md'), 'utf8');
    expect(text).not.toMatch(/spec\/[\w-]+\.md/);
  });
});
