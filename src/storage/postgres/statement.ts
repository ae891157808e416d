/**
 * One statement text for both dialects: the transitions that write through a raw connection (request
 * and run completions, failures, staging) are written once with better-sqlite3's named parameters
 * (`@name`), and pg gets the same text with positional ones (`$1`). Conversions are cached: the
 * statements are module constants and some run every few pages.
 */
export interface PgStatement {
  readonly text: string;
  readonly values: unknown[];
}

interface Converted {
  readonly text: string;
  readonly names: readonly string[];
}

const converted = new Map<string, Converted>();

function convert(text: string): Converted {
  let found = converted.get(text);
  if (found === undefined) {
    const names: string[] = [];
    const pgText = text.replace(/@(\w+)/g, (_, name: string) => {
      let at = names.indexOf(name);
      if (at < 0) at = names.push(name) - 1;
      return `$${at + 1}`;
    });
    found = { text: pgText, names };
    converted.set(text, found);
  }
  return found;
}

/** The statement with `$n` for each `@name`; throws when a name has no value (a typo would otherwise bind null). */
export function pgStatement(text: string, params: Readonly<Record<string, unknown>>): PgStatement {
  const { text: pgText, names } = convert(text);
  const values = names.map((name) => {
    if (!(name in params)) throw new Error(`no value for @${name}`);
    return params[name];
  });
  return { text: pgText, values };
}
