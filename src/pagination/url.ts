/** URL helpers shared by the paginators and the fetch loop. */

/**
 * Sets query parameters with URLSearchParams semantics: a parameter already present under the same
 * name is replaced (all its occurrences), others keep their place. The fragment is dropped: it is
 * never sent, and keeping it would make two requests for the same resource look different.
 */
export function setQueryParams(url: string, params: Readonly<Record<string, string>>): string {
  const parsed = new URL(url);
  for (const [name, value] of Object.entries(params)) parsed.searchParams.set(name, value);
  parsed.hash = '';
  return parsed.href;
}

/**
 * A value as URLSearchParams serialises it (application/x-www-form-urlencoded): everything but ASCII
 * letters, digits and `*-._` percent-encoded as UTF-8, a space as `+`. Throws URIError on a lone
 * surrogate, which URLSearchParams would replace instead.
 */
function formEncode(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** Letters and digits only, so URLSearchParams leaves them as they are. */
const markOf = (index: number): string => `IfwQueryValue${index}Mark`;

/**
 * setQueryParams for one URL and a fixed list of names, serialised once: the URL is built with a
 * mark in place of each value and later only the marks are replaced, because URLSearchParams
 * re-serialises the whole query on every set(), which costs more per page than everything else a
 * paginator does. The answer is exactly setQueryParams'; a URL that already contains a mark, or a
 * value URLSearchParams would repair (a lone surrogate), takes setQueryParams itself.
 */
export function queryParamsTemplate(url: string, names: readonly string[]): (values: readonly string[]) => string {
  const slow = (values: readonly string[]): string => setQueryParams(url, Object.fromEntries(names.map((name, i) => [name, values[i]!])));
  const marked = setQueryParams(url, Object.fromEntries(names.map((name, i) => [name, markOf(i)])));
  const parts: string[] = [];
  const order: number[] = [];
  let rest = marked;
  for (;;) {
    let next: { at: number; index: number } | undefined;
    names.forEach((_, index) => {
      const at = rest.indexOf(markOf(index));
      if (at >= 0 && (next === undefined || at < next.at)) next = { at, index };
    });
    if (next === undefined) break;
    parts.push(rest.slice(0, next.at));
    order.push(next.index);
    rest = rest.slice(next.at + markOf(next.index).length);
  }
  parts.push(rest);
  const eachOnce = order.length === names.length && new Set(order).size === names.length && !names.some((_, i) => url.includes(markOf(i)));
  if (!eachOnce) return slow;
  return (values) => {
    try {
      let built = parts[0]!;
      for (let i = 0; i < order.length; i++) built += formEncode(values[order[i]!]!) + parts[i + 1]!;
      return built;
    } catch {
      return slow(values);
    }
  };
}

/** The origin (`scheme://host:port`) credentials may be sent to. */
export const originOf = (url: string): string => new URL(url).origin;

/**
 * Whether a normalised href is on `origin`. A prefix test instead of parsing, because it runs for
 * every request; the `/` after the origin keeps `https://api.example.com.evil.net` out.
 */
export const isOnOrigin = (href: string, origin: string): boolean => href.startsWith(origin) && href.charCodeAt(origin.length) === 47; // '/'
