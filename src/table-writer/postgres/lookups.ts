/**
 * What the PostgreSQL importer asks the database before writing a chunk: which related keys exist
 * (relations) and which of the chunk's primary keys are already in the table. One query per relation
 * and one for the keys, each with an array parameter, instead of a statement per record.
 *
 * Asking first is what lets a chunk be written with a few statements and still be judged record by
 * record in order (see chunk.ts): with the answers in memory, "does the related row exist?" and "is
 * this key taken?" are decided exactly as the SQLite importer decides them one statement at a time.
 */
import type { SqlValue } from '../../mapping/convert.js';
import type { CompiledMapping } from '../../mapping/engine.js';
import type { PgClient } from './client.js';
import { perRelation } from '../target-sql.js';
import { relationLookupSql } from './sql.js';
import { stagedRelationSql } from './staging.js';

/**
 * PostgreSQL text cannot hold NUL, and asking for such a value fails the whole query (22021). It cannot
 * exist in a table, so it is left out of the question; writing it later fails that record alone.
 */
const askable = (value: SqlValue): boolean => typeof value !== 'string' || !value.includes('\u0000');

/** Keys compare as text: PostgreSQL returns `::text`, and a JS number's String() is the same digits. */
export const keyText = (value: SqlValue): string => (typeof value === 'string' ? value : String(value));

/**
 * One related table's key: values asked during a chunk's mapping, answered by one query. Like the
 * SQLite check, only hits are remembered across chunks (rows are never removed during an import, but a
 * miss may become a hit once a later record inserts the key).
 */
export class RelationLookup {
  private readonly hits = new Set<string>();
  private readonly asked = new Set<SqlValue>();
  private readonly sql: string;
  /** The columns relating to this key (set by relationLookups). */
  readonly columns: number[] = [];
  private stagedSql: string | undefined;

  constructor(
    private readonly table: string,
    private readonly field: string,
    private readonly type: Parameters<typeof relationLookupSql>[2],
  ) {
    this.sql = relationLookupSql(table, field, type);
  }

  /** Found in the table by an earlier query (rows written earlier in this chunk are the caller's business). */
  known(value: SqlValue): boolean {
    return this.hits.has(keyText(value));
  }

  ask(value: SqlValue): void {
    this.asked.add(value);
  }

  async resolve(client: PgClient): Promise<void> {
    const values = [...this.asked].filter(askable);
    this.asked.clear();
    if (values.length === 0) return;
    const found = await client.query<[string]>({ text: this.sql, values: [values], rowMode: 'array' });
    for (const [value] of found.rows) this.hits.add(value);
  }

  /** The same question asked of the staged rows (staging.ts), set-based: every staged value of the columns at once. */
  async resolveStaged(client: PgClient): Promise<void> {
    if (this.asked.size === 0) return;
    this.asked.clear();
    this.stagedSql ??= stagedRelationSql(this.columns, this.table, this.field, this.type);
    const found = await client.query<[string]>({ text: this.stagedSql, rowMode: 'array' });
    for (const [value] of found.rows) this.hits.add(value);
  }
}

/** One lookup per distinct related table and field, indexed by column (undefined: no relation). */
export function relationLookups(mapping: CompiledMapping): readonly (RelationLookup | undefined)[] {
  // Related fields have a compatible type (text and code are both text here), so the column's own type fits.
  const lookups = perRelation(mapping, ({ table, field }, column) => new RelationLookup(table, field, column.field.type));
  lookups.forEach((lookup, c) => lookup?.columns.push(c));
  return lookups;
}

/** Joins a composite key's parts; NUL cannot occur in a PostgreSQL text value, so the join is unambiguous. */
export const KEY_SEPARATOR = '\u0000';

/** Which staged rows' keys are in the table now (staging.ts existingKeys), joined as keyOf joins them. */
export async function existingStagedKeys(client: PgClient, sql: string): Promise<Set<string>> {
  const result = await client.query<string[]>({ text: sql, rowMode: 'array' });
  const found = new Set<string>();
  for (const parts of result.rows) found.add(parts.join(KEY_SEPARATOR));
  return found;
}

/** Which of `rows`' keys (by `keyOf`) are in the table now: one query with one array per key column. */
export async function existingKeys(
  client: PgClient,
  sql: string,
  keyColumns: readonly number[],
  rows: readonly (readonly SqlValue[])[],
): Promise<Set<string>> {
  const params: SqlValue[][] = keyColumns.map(() => []);
  for (const row of rows) {
    if (!keyColumns.every((k) => askable(row[k]!))) continue;
    for (let k = 0; k < keyColumns.length; k++) params[k]!.push(row[keyColumns[k]!]!);
  }
  const found = new Set<string>();
  if (params[0]!.length === 0) return found;
  const result = await client.query<string[]>({ text: sql, values: params, rowMode: 'array' });
  for (const parts of result.rows) found.add(parts.join(KEY_SEPARATOR));
  return found;
}
