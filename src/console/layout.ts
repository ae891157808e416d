/**
 * The page around every console page: skip link, top bar with the pages the user may open (a menu
 * behind a button on a narrow screen, when script runs; without it the bar stays open), flash, main.
 * The flash, the outcome of the form just sent, takes the focus when the page loads (console.js).
 */
import { html, type Html } from './html.js';

export interface NavItem {
  readonly label: string;
  readonly href: string;
  /** Whether this item is the section of the current page. */
  readonly current: boolean;
}

export interface Flash {
  readonly kind: 'info' | 'error';
  readonly text: string;
}

export interface LayoutOptions {
  readonly title: string;
  readonly body: Html;
  /** Absent on the sign-in page. */
  readonly user?: { readonly name: string; readonly csrfToken: string };
  readonly nav?: readonly NavItem[];
  readonly flash?: Flash;
}

export function layout(options: LayoutOptions): Html {
  const { title, body, user, nav = [], flash } = options;
  // htmx sends the CSRF token with every request it makes, so that partial updates and buttons need no form field.
  const hxHeaders = user === undefined ? undefined : JSON.stringify({ 'X-CSRF-Token': user.csrfToken });
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Integration service</title>
<link rel="stylesheet" href="/assets/console.css">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'>
<script src="/assets/console.js"></script>
<script src="/assets/htmx.min.js" defer></script>
</head>
<body${hxHeaders === undefined ? '' : html` hx-headers="${hxHeaders}"`}>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">Integration service</a>
  ${
    nav.length > 0 || user !== undefined
      ? html`<button type="button" class="menu-toggle secondary" aria-expanded="false" aria-controls="menu">Menu</button>
          <div class="menu" id="menu">
            ${
              nav.length > 0
                ? html`<nav class="main" aria-label="Main">
                    <ul>
                      ${nav.map((item) => html`<li><a href="${item.href}" ${item.current ? html` aria-current="page"` : ''}>${item.label}</a></li>`)}
                    </ul>
                  </nav>`
                : ''
            }
            ${
              user === undefined
                ? ''
                : html`<div class="who">
                    <span><span class="visually-hidden">Signed in as </span><strong>${user.name}</strong></span>
                    <form class="inline" method="post" action="/logout">
                      <input type="hidden" name="_csrf" value="${user.csrfToken}" /><button type="submit">Sign out</button>
                    </form>
                  </div>`
            }
          </div>`
      : ''
  }
</header>
<main id="main">
${
  flash === undefined
    ? ''
    : html`<div class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}" tabindex="-1" data-focus-on-load>
        ${flash.text}
      </div>`
}
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
