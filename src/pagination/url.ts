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

/** The origin (`scheme://host:port`) credentials may be sent to. */
export const originOf = (url: string): string => new URL(url).origin;

/**
 * Whether a normalised href is on `origin`. A prefix test instead of parsing, because it runs for
 * every request; the `/` after the origin keeps `https://api.example.com.evil.net` out.
 */
export const isOnOrigin = (href: string, origin: string): boolean => href.startsWith(origin) && href.charCodeAt(origin.length) === 47; // '/'
