/**
 * The CSDL excerpt in docs/bulk-import.md is the service's own `$metadata`: each part of it between two
 * `…` lines appears, line for line and in order (indentation aside), in the document a service
 * generates. A property added to or removed from the poll's answer changes the document, and this test
 * then asks for the excerpt to follow.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

const DOC = path.resolve(import.meta.dirname, '../../docs/bulk-import.md');

/** The ```xml block that holds the CSDL excerpt, as parts of consecutive lines split at `…`. */
export function excerptParts(markdown: string): string[][] {
  const block = /```xml\n(<edmx:Edmx[\s\S]*?)```/.exec(markdown)?.[1];
  if (block === undefined) throw new Error('docs/bulk-import.md has no ```xml block starting with <edmx:Edmx');
  const parts: string[][] = [[]];
  for (const line of block.split('\n').map((l) => l.trim())) {
    if (line === '') continue;
    if (line === '…') parts.push([]);
    else parts.at(-1)!.push(line);
  }
  return parts.filter((p) => p.length > 0);
}

/** Whether `lines` appear one after the other in `document` (each trimmed). */
export function appearsIn(document: readonly string[], lines: readonly string[]): boolean {
  for (let start = 0; start + lines.length <= document.length; start++) {
    if (lines.every((line, i) => document[start + i] === line)) return true;
  }
  return false;
}

describe('the pure helpers', () => {
  it('split an excerpt at … and find a part only where its lines follow each other', () => {
    const parts = excerptParts('x\n```xml\n<edmx:Edmx a>\n…\n  <b/>\n  <c/>\n…\n```\n');
    expect(parts).toEqual([['<edmx:Edmx a>'], ['<b/>', '<c/>']]);
    expect(appearsIn(['<a/>', '<b/>', '<c/>'], ['<b/>', '<c/>'])).toBe(true);
    expect(appearsIn(['<b/>', '<a/>', '<c/>'], ['<b/>', '<c/>'])).toBe(false);
  });
});

describe('the CSDL excerpt of docs/bulk-import.md', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ applyExample: false });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('is, part by part, in the $metadata the service generates', async () => {
    const answer = await t.inject({ method: 'GET', url: `${API}/$metadata`, headers: { accept: 'application/xml' } });
    expect(answer.statusCode).toBe(200);
    const document = answer.body.split('\n').map((l) => l.trim());
    const parts = excerptParts(fs.readFileSync(DOC, 'utf8'));
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(appearsIn(document, part), `this part of the excerpt:\n${part.join('\n')}`).toBe(true);
  });
});
