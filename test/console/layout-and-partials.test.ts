/**
 * The console's layout and partials, rendered: a table in its own named scroll area, a button named
 * after what it acts on, the menu button and the menu it opens, the flash that takes the focus, and the
 * console's own script served under the CSP (no inline script or style anywhere).
 */
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { consoleAsset } from '../../src/console/assets.js';
import { layout } from '../../src/console/layout.js';
import { actionButton, table } from '../../src/console/widgets.js';
import { html } from '../../src/console/html.js';

const rows = [{ a: 'x', n: 1 }];
const columns = [
  { header: 'Entry', cell: (r: (typeof rows)[number]) => r.a },
  { header: 'Count', numeric: true, cell: (r: (typeof rows)[number]) => r.n },
];

describe('table', () => {
  it('sits in its own scroll area that takes the focus and is named by its caption', () => {
    const markup = table({ rows, columns, caption: 'Job queue entries' }).markup;
    expect(markup).toMatch(/^<div class="table-scroll" role="region" tabindex="0" aria-label="Job queue entries">\s*<table>/);
    expect(markup).toMatch(/<\/table>\s*<\/div>$/);
  });

  it('is named by its label, or else by its first headers, when it has no caption', () => {
    expect(table({ rows, columns, label: 'Fields' }).markup).toContain('aria-label="Fields"');
    expect(table({ rows, columns }).markup).toContain('aria-label="Table: Entry, Count"');
    expect(table({ rows, columns: [{ header: html`<abbr>No.</abbr>`, cell: () => '' }] }).markup).toContain('aria-label="Table"');
  });

  it('escapes its name', () => {
    expect(table({ rows, columns, caption: '"><script>' }).markup).toContain('aria-label="&quot;&gt;&lt;script&gt;"');
  });
});

describe('actionButton', () => {
  it('takes an accessible name beside its label', () => {
    const markup = actionButton({
      action: '/job-queue/x/hold',
      label: 'Set On Hold',
      accessibleName: 'Set On Hold: Bulk Import Processor',
      csrfToken: 't',
    }).markup;
    expect(markup).toMatch(/<button\s+type="submit"\s+aria-label="Set On Hold: Bulk Import Processor"\s*>\s*Set On Hold<\/button/);
  });

  it('has none without one', () => {
    expect(actionButton({ action: '/x', label: 'Go', csrfToken: 't' }).markup).not.toContain('aria-label');
  });
});

describe('layout', () => {
  const page = (flash?: { kind: 'info' | 'error'; text: string }) =>
    layout({
      title: 'Dashboard',
      body: html`<p>body</p>`,
      user: { name: 'admin', csrfToken: 'tok' },
      nav: [
        { label: 'Dashboard', href: '/', current: true },
        { label: 'Job Queue', href: '/job-queue', current: false },
      ],
      ...(flash === undefined ? {} : { flash }),
    }).markup;

  it('puts the navigation and the account behind a Menu button that controls them', () => {
    const markup = page();
    expect(markup).toMatch(/<button type="button" class="menu-toggle secondary" aria-expanded="false" aria-controls="menu">Menu<\/button>/);
    expect(markup).toMatch(
      /<div class="menu" id="menu">[\s\S]*<nav class="main" aria-label="Main">[\s\S]*Sign out[\s\S]*<\/div>\s*<\/header>/,
    );
  });

  it('loads the console’s own script, and no inline script or style', () => {
    const markup = page({ kind: 'info', text: 'Saved.' });
    expect(markup).toContain('<script src="/assets/console.js"></script>');
    expect(markup).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(markup).not.toMatch(/\sstyle=/);
    expect(markup).not.toMatch(/<style/);
  });

  it('makes the flash, the outcome of the form just sent, the element that takes the focus', () => {
    expect(page({ kind: 'info', text: 'Saved.' })).toMatch(
      /<div class="flash info" role="status" tabindex="-1" data-focus-on-load>\s*Saved.\s*<\/div>/,
    );
    expect(page({ kind: 'error', text: 'No.' })).toMatch(
      /<div class="flash error" role="alert" tabindex="-1" data-focus-on-load>\s*No.\s*<\/div>/,
    );
  });

  it('has no menu button on a page without navigation (sign-in)', () => {
    expect(layout({ title: 'Sign in', body: html`` }).markup).not.toContain('menu-toggle');
  });
});

describe('the console’s assets', () => {
  it('serve console.js as JavaScript: the menu, the focus after a submit, the scroll kept across a refresh', () => {
    const js = consoleAsset('console.js');
    expect(js?.contentType).toBe('text/javascript; charset=utf-8');
    expect(js?.body).toContain("classList.add('js')");
    expect(js?.body).toContain('aria-expanded');
    expect(js?.body).toContain('data-focus-on-load');
    expect(js?.body).toContain('htmx:beforeSwap');
    // It parses: no syntax error would reach a browser.
    expect(() => new vm.Script(js!.body)).not.toThrow();
  });

  it('collapse the menu under 800 px only when script runs, and scroll wide tables in their area', () => {
    const css = consoleAsset('console.css')!.body;
    expect(css).toMatch(/@media \(max-width: 799\.98px\) \{[\s\S]*\.js header\.top \.menu:not\(\.open\) \{ display:none; \}/);
    expect(css).toContain('.table-scroll { position:relative; overflow-x:auto;');
    expect(css).toContain('fieldset { min-width:0; }');
  });
});
