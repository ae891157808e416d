/**
 * The console's static assets, shipped in the package and served by the service: its stylesheet
 * (here, so that the TypeScript build carries it) and htmx, read from its npm package at start.
 * Nothing comes from a CDN: the service runs offline.
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
header.top { display:flex; align-items:center; gap:24px; padding:8px 20px; background:#12263f; color:#fff; }
header.top a { color:#fff; text-decoration:none; } header.top .brand { font-weight:600; }
nav.main ul { display:flex; flex-wrap:wrap; gap:4px; list-style:none; margin:0; padding:0; }
nav.main a { display:block; padding:6px 10px; border-radius:4px; }
nav.main a[aria-current="page"], nav.main a:hover { background:#2c4a70; }
header.top .who { margin-left:auto; display:flex; gap:12px; align-items:center; }
header.top button { background:transparent; color:#fff; border:1px solid #8fa7c4; }
main { padding:16px 20px 40px; max-width:1400px; }
h1 { font-size:1.5rem; margin:8px 0 16px; } h2 { font-size:1.15rem; margin:24px 0 8px; }
table { border-collapse:collapse; width:100%; margin:8px 0; }
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
input, select, textarea, button { font:inherit; padding:5px 8px; border:1px solid var(--line); border-radius:4px; }
textarea { width:100%; font-family:ui-monospace, monospace; }
button, .button { background:var(--accent); color:#fff; border-color:var(--accent); cursor:pointer; text-decoration:none; display:inline-block; }
button.secondary { background:#fff; color:var(--accent); } button.danger { background:var(--bad); border-color:var(--bad); }
button:disabled { opacity:.5; cursor:not-allowed; }
dl.fields { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; margin:8px 0; }
dl.fields dt { font-weight:600; color:var(--muted); } dl.fields dd { margin:0; word-break:break-word; }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(180px, 1fr)); gap:12px; margin:8px 0; }
.card { border:1px solid var(--line); border-radius:6px; padding:10px 12px; background:var(--panel); }
.card .n { font-size:1.6rem; font-weight:600; font-variant-numeric:tabular-nums; }
.muted { color:var(--muted); } .pager { display:flex; gap:12px; margin:8px 0; }
pre { background:var(--panel); padding:8px; overflow:auto; max-height:24rem; }
.hint { color:var(--muted); font-size:.9em; margin:2px 0 0; }
.check { display:flex; gap:8px; align-items:baseline; margin:4px 0; } .check label { display:inline; }
.field { margin:0 0 12px; } .field-error { color:var(--bad); font-size:.9em; }
svg.chart text { font-size:11px; fill:var(--muted); }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
`;

let htmx: Asset | undefined;

/** The assets by file name, as served under /assets/. */
export function consoleAsset(name: string): Asset | undefined {
  if (name === 'console.css') return { body: CSS, contentType: 'text/css; charset=utf-8' };
  if (name === 'htmx.min.js') {
    htmx ??= {
      body: fs.readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'), 'utf8'),
      contentType: 'text/javascript; charset=utf-8',
    };
    return htmx;
  }
  return undefined;
}
