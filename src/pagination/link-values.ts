/**
 * The `Link` header (RFC 8288 section 3) read into its links: a target in `<…>` and its parameters,
 * several links per header separated by commas, several headers (each one list), optional whitespace
 * around `,`, `;` and `=`, values as tokens or quoted strings (with `\` escapes, commas and semicolons
 * inside), parameter names case-insensitive, a repeated parameter ignored after its first occurrence,
 * and `rel` a space-separated list of relation types compared case-insensitively (`rel="next last"`).
 *
 * Written here rather than taken from `http-link-header`: that package misreads whitespace before a
 * comma or around `=` (`<a>; rel="prev" , <b>; rel = "next"` yields no next link), which RFC 8288's
 * grammar allows (#rule lists and BWS).
 */

export interface LinkValue {
  /** The target as written (resolve it against the request URL). */
  readonly target: string;
  /** Parameters by lower-case name, the first occurrence of each. */
  readonly params: Readonly<Record<string, string>>;
  /** The relation types of `rel`, lower case. */
  readonly rels: readonly string[];
}

const WS = new Set([' ', '\t']);
/** Characters that end a token in a parameter (RFC 9110 tchar excludes them). */
const TOKEN_END = new Set([' ', '\t', ';', ',', '=', '"', '<', '>']);

class LinkSyntaxError extends Error {}

/** Parses one header value; throws LinkSyntaxError naming the offset of the first problem. */
function parseOne(header: string, links: LinkValue[]): void {
  let at = 0;
  const fail = (what: string): never => {
    throw new LinkSyntaxError(`${what} at character ${at + 1}`);
  };
  const skipWs = (): void => {
    while (at < header.length && WS.has(header[at]!)) at++;
  };
  const token = (): string => {
    const start = at;
    while (at < header.length && !TOKEN_END.has(header[at]!)) at++;
    return header.slice(start, at);
  };
  const quoted = (): string => {
    at++; // the opening quote
    let value = '';
    while (at < header.length && header[at] !== '"') {
      if (header[at] === '\\' && at + 1 < header.length) at++;
      value += header[at];
      at++;
    }
    if (at >= header.length) fail('a quoted value is not closed');
    at++; // the closing quote
    return value;
  };
  for (;;) {
    // Empty list elements are allowed (RFC 9110 5.6.1): ", ,".
    while (at < header.length && (WS.has(header[at]!) || header[at] === ',')) at++;
    if (at >= header.length) return;
    if (header[at] !== '<') fail('expected "<" to start a link');
    const close = header.indexOf('>', at);
    if (close < 0) fail('a "<" has no ">"');
    const target = header.slice(at + 1, close).trim();
    at = close + 1;
    const params: Record<string, string> = {};
    for (;;) {
      skipWs();
      if (at >= header.length || header[at] === ',') break;
      if (header[at] !== ';') fail('expected ";" or ","');
      at++;
      skipWs();
      const name = token().toLowerCase();
      if (name === '') fail('a parameter has no name');
      skipWs();
      let value = '';
      if (header[at] === '=') {
        at++;
        skipWs();
        value = header[at] === '"' ? quoted() : token();
      }
      if (!Object.hasOwn(params, name)) params[name] = value;
    }
    const rels = (params.rel ?? '')
      .split(/[ \t]+/)
      .filter((r) => r !== '')
      .map((r) => r.toLowerCase());
    links.push({ target, params, rels });
  }
}

/** The links of one or several `Link` headers, in order; or the problem with the first that cannot be read. */
export function parseLinkHeader(headers: string | readonly string[] | undefined): { links: LinkValue[] } | { error: string } {
  const links: LinkValue[] = [];
  const values = headers === undefined ? [] : typeof headers === 'string' ? [headers] : headers;
  for (const value of values) {
    try {
      parseOne(value, links);
    } catch (err) {
      if (err instanceof LinkSyntaxError) return { error: `the Link header ${JSON.stringify(value)} cannot be read: ${err.message}` };
      throw err;
    }
  }
  return { links };
}

/** The targets of the links with relation `rel` (lower case). */
export const linksWith = (links: readonly LinkValue[], rel: string): string[] =>
  links.filter((l) => l.rels.includes(rel)).map((l) => l.target);
