/**
 * Reading a console page's form as a test needs to: an input's tag and value, a select's chosen
 * option, whether a control is marked invalid or focused, and the error under it. Plain text
 * matching over the markup the partials write (src/console/fields.ts).
 */
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Markup's text as read: the template's escapes undone. */
export const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The opening tag of the control named `name` (input, select or textarea); undefined when none. */
export function controlTag(page: string, name: string): string | undefined {
  return new RegExp(`<(?:input|select|textarea)\\b[^>]*\\bname="${escapeRe(name)}"[^>]*>`).exec(page)?.[0];
}

/** The value the control named `name` shows: an input's value, a select's selected option, a text area's text. */
export function valueOf(page: string, name: string): string | undefined {
  const tag = controlTag(page, name);
  if (tag === undefined) return undefined;
  if (tag.startsWith('<select')) {
    const at = page.indexOf(tag);
    const body = page.slice(at, page.indexOf('</select>', at));
    const selected = /<option value="([^"]*)"\s*selected/.exec(body);
    return selected === null ? '' : unescape(selected[1]!);
  }
  if (tag.startsWith('<textarea')) {
    const at = page.indexOf(tag) + tag.length;
    return unescape(page.slice(at, page.indexOf('</textarea>', at)));
  }
  if (/\btype="checkbox"/.test(tag)) return /\schecked\b/.test(tag) ? 'on' : '';
  const value = /\bvalue="([^"]*)"/.exec(tag);
  return value === null ? undefined : unescape(value[1]!);
}

export const isInvalid = (page: string, name: string): boolean => /aria-invalid="true"/.test(controlTag(page, name) ?? '');
export const hasAutofocus = (page: string, name: string): boolean => /\sautofocus\b/.test(controlTag(page, name) ?? '');
/** Names of the controls that carry `autofocus`. */
export const focused = (page: string): string[] =>
  [...page.matchAll(/<(?:input|select|textarea)\b[^>]*\sautofocus\b[^>]*>/g)].map((m) => /\bname="([^"]*)"/.exec(m[0])?.[1] ?? '');

/** The text of the error paragraph that describes the control `name`. */
export function errorUnder(page: string, name: string): string | undefined {
  const tag = controlTag(page, name);
  const describedBy = tag === undefined ? undefined : /aria-describedby="([^"]*)"/.exec(tag)?.[1];
  const errorId = describedBy?.split(' ').find((id) => id.endsWith('-error'));
  if (errorId === undefined) return undefined;
  const p = new RegExp(`<p class="field-error" id="${escapeRe(errorId)}">([\\s\\S]*?)</p>`).exec(page);
  return p === null ? undefined : unescape(p[1]!.trim());
}

/** The text of the notice paragraph that describes the control `name`. */
export function noticeUnder(page: string, name: string): string | undefined {
  const tag = controlTag(page, name);
  const describedBy = tag === undefined ? undefined : /aria-describedby="([^"]*)"/.exec(tag)?.[1];
  const id = describedBy?.split(' ').find((x) => x.endsWith('-notice'));
  if (id === undefined) return undefined;
  const p = new RegExp(`<p class="warning" id="${escapeRe(id)}">([\\s\\S]*?)</p>`).exec(page);
  return p === null ? undefined : unescape(p[1]!.replace(/\s+/g, ' ').trim());
}

/** Every control's name and value in the page's first form with `action`, as the browser would send it (no buttons). */
export function formValues(page: string, action: string): Record<string, string> {
  const start = page.indexOf(`action="${action}"`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const values: Record<string, string> = {};
  for (const m of form.matchAll(/<(?:input|select|textarea)\b[^>]*\bname="([^"]*)"[^>]*>/g)) {
    const name = unescape(m[1]!);
    const tag = m[0];
    if (/\btype="checkbox"/.test(tag) && !/\schecked\b/.test(tag)) continue;
    if (/\bdisabled\b/.test(tag)) continue;
    values[name] = /\btype="checkbox"/.test(tag) ? (/\bvalue="([^"]*)"/.exec(tag)?.[1] ?? 'on') : (valueOf(form, name) ?? '');
  }
  return values;
}
