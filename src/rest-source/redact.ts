/**
 * Secrets out of everything a run shows: URLs in pages, errors and logs, and response excerpts that
 * echo a credential back. Only the secret parts are replaced; the rest of a URL stays byte for byte,
 * so a user can still compare it with what the API documents.
 */
import type { ConnectionAuth } from './model.js';

export const REDACTED = '[redacted]';

/** Names that carry credentials by convention (access_token, api_key, X-Amz-Signature, sig, …), in queries and headers. */
const SECRET_NAME = /token|key|secret|password|passwd|signature|credential|^sig$/i;

/** Pagination cursors named like tokens ($skiptoken, pageToken, nextToken, continuationToken) are not credentials. */
const CURSOR_NAME = /^(\$?skip_?token|(next_?)?page_?token|next_?token|continuation_?token)$/i;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name) && !CURSOR_NAME.test(name);

/** A superset of SECRET_NAME matches anywhere in a URL: when it fails, no parameter name can be secret. */
const SECRET_NAME_ANYWHERE = /token|key|secret|passw|signature|credential|sig=/i;

/**
 * Whether percent-decoding could reveal a secret name (`%74oken`): only with a `%` in a query
 * parameter's name (before its `=`), and then the decoded URL must pass the same test. A `%` in a value
 * decodes to no name: a cursor sent percent-encoded on every page needs no decoding of its URL.
 */
function encodedSecretName(url: string): boolean {
  const query = url.indexOf('?');
  if (query < 0) return false;
  const hash = url.indexOf('#', query);
  const end = hash < 0 ? url.length : hash;
  let inName = false;
  for (let at = url.indexOf('%', query); at >= 0 && at < end && !inName; at = url.indexOf('%', at + 1)) {
    const pairStart = Math.max(url.lastIndexOf('&', at), query);
    const eq = url.indexOf('=', pairStart);
    inName = eq < 0 || eq > at;
  }
  if (!inName) return false;
  try {
    return SECRET_NAME_ANYWHERE.test(decodeURIComponent(url));
  } catch {
    return true;
  }
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/**
 * `url` with userinfo and secret query values replaced by `[redacted]`. `secretParams` adds names
 * (e.g. the connection's API key parameter) to the conventional ones. Text that is not a URL is
 * returned unchanged.
 */
export function redactUrl(url: string, secretParams: readonly string[] = []): string {
  // Most URLs have nothing to redact: one cheap test before taking the URL apart (this runs per page).
  if (secretParams.length === 0 && !url.includes('@') && !SECRET_NAME_ANYWHERE.test(url) && !encodedSecretName(url)) return url;
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) return url;
  const authorityStart = schemeEnd + 3;
  const pathStart = url.slice(authorityStart).search(/[/?#]/);
  const authorityEnd = pathStart < 0 ? url.length : authorityStart + pathStart;
  const authority = url.slice(authorityStart, authorityEnd);
  const at = authority.lastIndexOf('@');
  const host = at < 0 ? authority : `${REDACTED}@${authority.slice(at + 1)}`;

  let rest = url.slice(authorityEnd);
  const queryStart = rest.indexOf('?');
  if (queryStart >= 0) {
    const hashStart = rest.indexOf('#', queryStart);
    const queryEnd = hashStart < 0 ? rest.length : hashStart;
    const extra = new Set(secretParams.map((n) => n.toLowerCase()));
    const query = rest
      .slice(queryStart + 1, queryEnd)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 0) return pair;
        const name = decodeName(pair.slice(0, eq));
        return isSecretName(name) || extra.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
      })
      .join('&');
    rest = `${rest.slice(0, queryStart + 1)}${query}${rest.slice(queryEnd)}`;
  }
  return `${url.slice(0, authorityStart)}${host}${rest}`;
}

/** Secret values shorter than this are not searched for in text: replacing "a" everywhere helps nobody. */
const MIN_SECRET_LENGTH = 4;

/** What must never appear in a message about this connection. */
export interface Secrets {
  readonly values: readonly string[];
  readonly params: readonly string[];
}

export function secretsOf(auth: ConnectionAuth, extraValues: readonly string[] = []): Secrets {
  const values = [...extraValues];
  const params: string[] = [];
  switch (auth.type) {
    case 'none':
      break;
    case 'basic':
      values.push(auth.password, Buffer.from(`${auth.username}:${auth.password}`).toString('base64'));
      break;
    case 'bearer':
      values.push(auth.token);
      break;
    case 'apiKey':
      values.push(auth.value);
      if (auth.in === 'query') params.push(auth.name);
      break;
    case 'oauth2ClientCredentials':
      values.push(auth.clientSecret);
      break;
    default: {
      const unexpected: never = auth;
      throw new Error(`unknown auth type ${JSON.stringify(unexpected)}`);
    }
  }
  return { values: values.filter((v) => v.length >= MIN_SECRET_LENGTH), params };
}

const URL_IN_TEXT = /https?:\/\/[^\s"'<>`]+/g;

/** `text` (a message, a response excerpt) with every URL redacted and every known secret value replaced. */
export function redactText(text: string, secrets: Secrets): string {
  // Punctuation right after a URL in a sentence ("…?page=2): the service …") is not part of it.
  let out = text.replace(URL_IN_TEXT, (match) => {
    const trailing = /[).,;:]+$/.exec(match)?.[0] ?? '';
    return redactUrl(match.slice(0, match.length - trailing.length), secrets.params) + trailing;
  });
  for (const value of secrets.values) out = out.replaceAll(value, REDACTED);
  for (const value of secrets.values) {
    const encoded = encodeURIComponent(value);
    if (encoded !== value) out = out.replaceAll(encoded, REDACTED);
  }
  return out;
}
