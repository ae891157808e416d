/**
 * The console's escaping templates and partials against hostile values, context by context (text,
 * attribute, URL attribute), and the closed boundary: an `Html` cannot be made or faked from outside.
 */
import { describe, expect, it } from 'vitest';
import { Html, html, safeUrl } from '../../src/console/html.js';
import { actionButton, control, field, formError, liveRegion, pager, table } from '../../src/console/widgets.js';

const HOSTILE: readonly (readonly [string, string])[] = [
  ['a script tag', '<script>window.__xss=1</script>'],
  ['an img with onerror', '<img src=x onerror=alert(1)>'],
  ['double quotes', '" onmouseover="alert(1)'],
  ['single quotes', "' onmouseover='alert(1)"],
  ['an ampersand entity', '&lt;script&gt;&amp;'],
  ['a NUL', 'a\u0000b'],
  ['non-BMP characters', 'emoji 😀 𝔘 end'],
  ['a closing textarea', '</textarea><script>alert(1)</script>'],
];

/** The markup holds no tag, attribute break or NUL that the value brought in. */
function expectInert(markup: string, value: string): void {
  expect(markup).not.toMatch(/<script|<img|<\/textarea><|onmouseover="|onmouseover='/i);
  expect(markup).not.toContain('\u0000');
  if (/[\u{10000}-\u{10FFFF}]/u.test(value)) expect(markup).toContain('😀 𝔘');
}

describe('html: every context escapes hostile values', () => {
  it.each(HOSTILE)('text: %s', (_name, value) => {
    const out = html`<p>${value}</p>`.markup;
    expectInert(out, value);
    if (value.includes('&')) expect(out).toContain('&amp;lt;script&amp;gt;&amp;amp;');
  });

  it.each(HOSTILE)('attribute: %s', (_name, value) => {
    const out = html`<input value="${value}" title="${value}" />`.markup;
    expectInert(out, value);
    // The attributes' own quotes only: the value's quotes are references.
    expect(out.match(/"/g)?.length).toBe(4);
    expect(out).not.toContain("'");
  });

  it.each(HOSTILE)('a partial (table cell, field, banner, button, pager, live region): %s', (_name, value) => {
    const parts = [
      table({ rows: [value], columns: [{ header: value, cell: (v) => v }], empty: value, caption: value }),
      field({ name: 'n', label: value, value, help: value, error: value }),
      field({ kind: 'textarea', name: 't', label: 'T', value }),
      field({ kind: 'select', name: 's', label: 'S', options: [[value, value]], value }),
      control({ kind: 'checkbox', name: 'c', checked: true, value }, { ariaLabel: value }),
      formError(value),
      actionButton({
        action: '/x',
        label: value,
        accessibleName: value,
        csrfToken: value,
        confirm: value,
        disabledReason: value,
        enabled: false,
      }),
      pager({ next: { href: '/n', label: value }, position: value }),
      liveRegion({ id: value, url: '/r' }, value),
    ];
    for (const part of parts) expectInert(String(part), value);
  });
});

describe('html: URL attributes take relative or http(s) URLs only', () => {
  const REFUSED = [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    '\u0001javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '//evil.example/x',
    '/\\evil.example/x',
    '\\\\evil.example',
    ' //evil.example',
    'http:evil',
    'a\u0000b',
    'mailto:x@example.com',
  ];
  const KEPT = ['/requests?status=Failed&x=1', 'relative/path', '?page=2', '#main', 'https://example.com/a', 'http://127.0.0.1:8080/'];

  it.each(REFUSED)('renders %j as #', (url) => {
    expect(safeUrl(url)).toBe('#');
    for (const out of [
      html`<a href="${url}">x</a>`,
      html`<img src="${url}" />`,
      html`<form action="${url}"></form>`,
      html`<div hx-get="${url}"></div>`,
      html`<form hx-post="${url}"></form>`,
    ])
      expect(out.markup).toMatch(/="#"|='#'/);
  });

  it.each(KEPT)('keeps %j (escaped)', (url) => {
    expect(safeUrl(url)).toBe(url);
    expect(html`<a href="${url}">x</a>`.markup).toBe(`<a href="${url.replace(/&/g, '&amp;')}">x</a>`);
  });

  it('checks URLs the partials put in attributes', () => {
    expect(String(actionButton({ action: 'javascript:alert(1)', label: 'Go', csrfToken: 't' }))).not.toContain('javascript:');
    expect(String(pager({ next: { href: 'data:text/html,x', label: 'Next' } }))).toContain('href="#"');
    expect(String(liveRegion({ id: 'r', url: '//evil.example' }, 'x'))).toContain('hx-get="#"');
  });

  it('checks an Html value in a URL attribute too', () => {
    expect(html`<a href="${html`javascript:${'alert(1)'}`}">x</a>`.markup).toBe('<a href="#">x</a>');
  });

  it('leaves other attributes and text alone', () => {
    expect(html`<p title="${'javascript:x'}">${'javascript:x'}</p>`.markup).toBe('<p title="javascript:x">javascript:x</p>');
  });
});

describe('the escape boundary is closed', () => {
  it('Html cannot be constructed from outside html.ts', () => {
    const forge = Html as unknown as new (token: unknown, markup: string) => Html;
    expect(() => new forge(Symbol('Html'), '<script>alert(1)</script>')).toThrow(TypeError);
    expect(() => new forge(undefined, '<script>alert(1)</script>')).toThrow(TypeError);
  });

  it('an object that only looks like Html is refused by the templates, not rendered as markup', () => {
    const fake = Object.create(Html.prototype) as Html;
    expect(Html.is(fake)).toBe(false);
    expect(() => html`<p>${fake}</p>`).toThrow(TypeError);
    const duck = { markup: '<script>alert(1)</script>', toString: () => '<script>alert(1)</script>' } as unknown as Html;
    expect(() => html`<p>${duck}</p>`).toThrow(TypeError);
  });

  it('made by html, an Html is kept as markup and nested without escaping twice', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(Html.is(inner)).toBe(true);
    expect(html`<p>${inner}</p>`.markup).toBe('<p><b>&lt;i&gt;</b></p>');
  });
});
