/**
 * The console's static assets, shipped in the package and served by the service: its stylesheet and
 * its own small script (here, so that the TypeScript build carries them) and htmx, read from its npm
 * package at start. Nothing comes from a CDN: the service runs offline, and the CSP allows no inline
 * script or style, so behaviour lives in console.js.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';

export interface Asset {
  readonly body: string;
  readonly contentType: string;
}

const CSS = `
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --bg:#ffffff; --panel:#f6f8fa; --accent:#0b5cad;
  --ok:#1a7f37; --warn:#8a5a00; --bad:#b42318; --focus:#ffbf47; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg); font-size:15px; line-height:1.45; }
a { color:var(--accent); }
:focus-visible { outline:3px solid var(--focus); outline-offset:2px; }
.htmx-indicator { opacity:0; } .htmx-request .htmx-indicator, .htmx-request.htmx-indicator { opacity:1; transition:opacity 200ms ease-in; }
label.inline { display:inline; }
.skip { position:absolute; left:-999px; } .skip:focus { left:8px; top:8px; background:#fff; padding:4px 8px; z-index:10; }
header.top { display:flex; flex-wrap:wrap; align-items:center; gap:8px 16px; padding:8px 16px; background:#12263f; color:#fff; }
header.top a { color:#fff; text-decoration:none; } header.top .brand { font-weight:600; white-space:nowrap; }
header.top .menu { display:flex; align-items:center; gap:8px 16px; flex:1 1 0; min-width:0; }
nav.main ul { display:flex; flex-wrap:wrap; gap:2px; list-style:none; margin:0; padding:0; }
nav.main a { display:block; padding:6px 7px; border-radius:4px; white-space:nowrap; }
nav.main a[aria-current="page"], nav.main a:hover { background:#2c4a70; }
header.top .who { margin-left:auto; display:flex; flex-wrap:wrap; gap:4px 12px; align-items:center; white-space:nowrap; }
header.top button { background:transparent; color:#fff; border:1px solid #8fa7c4; }
header.top .menu-toggle { display:none; margin-left:auto; }
main { padding:16px 20px 40px; max-width:1400px; }
@media (max-width: 799.98px) {
  header.top { padding:8px 12px; }
  header.top .menu { flex-basis:100%; flex-direction:column; align-items:stretch; }
  header.top .who { margin-left:0; }
  .js header.top .menu-toggle { display:inline-block; }
  .js header.top .menu:not(.open) { display:none; }
  .js nav.main ul { flex-direction:column; }
  main { padding:12px 12px 32px; }
  dl.fields { grid-template-columns:minmax(0, 1fr); gap:0; } dl.fields dd { margin-bottom:6px; }
  svg.chart text { font-size:18px; } svg.chart text.empty { font-size:22px; }
}
h1 { font-size:1.5rem; margin:8px 0 16px; } h2 { font-size:1.15rem; margin:24px 0 8px; }
fieldset { min-width:0; }
.table-scroll { position:relative; overflow-x:auto; margin:8px 0; max-width:100%; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:var(--panel); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.status { display:inline-block; padding:1px 8px; border-radius:10px; font-size:.85em; border:1px solid currentColor; }
.status-Completed, .status-Ready, .ok { color:var(--ok); }
.status-Failed, .status-Error, .bad { color:var(--bad); }
.status-Pending, .status-Processing, .status-OnHold, .status-InProcess, .warn { color:var(--warn); }
.status-Cancelled { color:var(--muted); }
.status-Completedwithwarnings { color:var(--warn); background:#fff8c5; }
.flash { padding:10px 14px; border-radius:4px; margin:0 0 16px; border:1px solid; }
.flash.info { background:#ddf4ff; border-color:#54aeff; } .flash.error { background:#ffebe9; border-color:#ff8182; }
.warning { background:#fff8c5; border:1px solid #d4a72c; padding:10px 14px; border-radius:4px; margin:8px 0; }
form.inline { display:inline; }
form.filters { display:flex; flex-wrap:wrap; gap:12px; align-items:flex-end; margin:8px 0 12px; }
label { display:block; font-weight:600; font-size:.9em; margin-bottom:2px; }
input, select, textarea, button { font:inherit; padding:5px 8px; border:1px solid var(--line); border-radius:4px; max-width:100%; }
textarea { width:100%; font-family:ui-monospace, monospace; }
button, .button { background:var(--accent); color:#fff; border-color:var(--accent); cursor:pointer; text-decoration:none; display:inline-block; }
button.secondary { background:#fff; color:var(--accent); } button.danger { background:var(--bad); border-color:var(--bad); }
button:disabled { opacity:.5; cursor:not-allowed; }
dl.fields { display:grid; grid-template-columns:max-content minmax(0, 1fr); gap:4px 16px; margin:8px 0; }
dl.fields dt { font-weight:600; color:var(--muted); } dl.fields dd { margin:0; overflow-wrap:anywhere; }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(110px, 1fr)); gap:12px; margin:8px 0; }
.card { border:1px solid var(--line); border-radius:6px; padding:10px 12px; background:var(--panel); }
.card .n { font-size:1.6rem; font-weight:600; font-variant-numeric:tabular-nums; }
.muted { color:var(--muted); } .pager { display:flex; gap:12px; margin:8px 0; }
pre { background:var(--panel); padding:8px; overflow:auto; max-height:24rem; }
.hint { color:var(--muted); font-size:.9em; margin:2px 0 0; }
.check { display:flex; gap:8px; align-items:baseline; margin:4px 0; } .check label { display:inline; }
.field { margin:0 0 12px; } .field-error { color:var(--bad); font-size:.9em; }
svg.chart { display:block; width:100%; max-width:760px; height:auto; }
svg.chart text { font-size:12px; fill:var(--muted); } svg.chart .axis { stroke:var(--muted); stroke-width:1; }
svg.chart .grid { stroke:var(--line); stroke-width:1; } svg.chart text.empty { font-size:14px; fill:var(--fg); }
svg.chart .series-0 { fill:#0b5cad; } svg.chart .series-1 { fill:#8250df; }
.legend { display:flex; flex-wrap:wrap; gap:4px 16px; margin:4px 0 0; padding:0; list-style:none; font-size:.9em; }
.legend .swatch { display:inline-block; width:10px; height:10px; margin-right:6px; vertical-align:baseline; }
.legend .series-0 { background:#0b5cad; } .legend .series-1 { background:#8250df; }
.health { display:flex; gap:10px; align-items:baseline; padding:10px 14px; border-radius:4px; margin:0 0 12px; border:1px solid; border-left-width:6px; }
.health ul { margin:0; padding-left:18px; }
.health-green { background:#dafbe1; border-color:var(--ok); } .health-amber { background:#fff8c5; border-color:#d4a72c; }
.health-red { background:#ffebe9; border-color:var(--bad); }
.card.tone-bad { border-color:var(--bad); border-left-width:6px; } .card.tone-bad .n { color:var(--bad); }
.card.tone-warn { border-color:#d4a72c; border-left-width:6px; } .card.tone-warn .n { color:var(--warn); }
.badge { display:inline-block; padding:0 8px; border-radius:10px; font-weight:600; font-size:.85em; }
.badge.bad { background:var(--bad); color:#fff; } .badge.warn { background:#fff8c5; color:var(--warn); border:1px solid #d4a72c; }
.flash:focus, [data-focus-on-load]:focus { outline:3px solid var(--focus); outline-offset:2px; }
.hold { color:var(--warn); font-weight:600; }
form.filters > * { min-width:0; max-width:100%; } form.filters .hint { max-width:24rem; }
figure { margin:8px 0 16px; } td time { white-space:nowrap; }
.visually-hidden { position:absolute; width:1px; height:1px; padding:0; margin:-1px; border:0; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
`;

/**
 * The console's own behaviour, all of it optional (every page works without it): the menu button on a
 * narrow screen, the focus moved to the outcome of a form just sent, and a table's sideways scroll kept
 * across a live region's refresh.
 */
const JS = `'use strict';
document.documentElement.classList.add('js');
(function () {
  // The outcome of a form: the flash after a redirect, a refused form's banner (formError), or a region
  // a page marks with data-focus-on-load.
  function focusResult(root) {
    var target = root.querySelector('[data-focus-on-load], main .flash');
    if (target === null) return;
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.focus();
  }
  document.addEventListener('DOMContentLoaded', function () {
    var toggle = document.querySelector('.menu-toggle');
    var menu = toggle === null ? null : document.getElementById(toggle.getAttribute('aria-controls'));
    if (toggle !== null && menu !== null) {
      toggle.addEventListener('click', function () {
        var open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        menu.classList.toggle('open', open);
      });
      document.addEventListener('keydown', function (e) {
        if (e.key === 'Escape' && menu.classList.contains('open')) {
          menu.classList.remove('open');
          toggle.setAttribute('aria-expanded', 'false');
          toggle.focus();
        }
      });
    }
    // A page that asks for a field's focus itself (autofocus) keeps it.
    var active = document.activeElement;
    if (document.querySelector('[autofocus]') === null && (active === null || active === document.body)) focusResult(document);
  });
  // A form sent with htmx whose answer is swapped into the page: its outcome takes the focus (not a live refresh).
  document.addEventListener('htmx:afterSettle', function (e) {
    var config = e.detail && e.detail.requestConfig;
    if (!config || String(config.verb).toLowerCase() !== 'post') return;
    focusResult(e.target instanceof Element && e.target.isConnected ? e.target : document);
  });
  var scrolled = [];
  document.addEventListener('htmx:beforeSwap', function () {
    scrolled = Array.prototype.map.call(document.querySelectorAll('.table-scroll'), function (el) { return el.scrollLeft; });
  });
  document.addEventListener('htmx:afterSwap', function () {
    document.querySelectorAll('.table-scroll').forEach(function (el, i) { if (scrolled[i]) el.scrollLeft = scrolled[i]; });
  });
})();
`;

let htmx: Asset | undefined;

/** The assets by file name, as served under /assets/. */
export function consoleAsset(name: string): Asset | undefined {
  if (name === 'console.css') return { body: CSS, contentType: 'text/css; charset=utf-8' };
  if (name === 'console.js') return { body: JS, contentType: 'text/javascript; charset=utf-8' };
  if (name === 'htmx.min.js') {
    htmx ??= {
      body: fs.readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'), 'utf8'),
      contentType: 'text/javascript; charset=utf-8',
    };
    return htmx;
  }
  return undefined;
}
