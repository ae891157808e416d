/**
 * What both dialects' importers build their statements from: the target table's names as SQL, the
 * clauses whose text is the same on SQLite and PostgreSQL, and the related keys a mapping checks. How
 * the rows reach a statement is the dialect's own (a row bound at a time and multi-row VALUES on SQLite,
 * sqlite/statements.ts; the staged rows, sqlite/staged-rows.ts; arrays read through `unnest` on
 * PostgreSQL, postgres/sql.ts).
 */
import type { CompiledColumn, CompiledMapping } from '../mapping/engine.js';
import { quoteIdent } from '../tables/ddl.js';
import type { FieldRelation } from '../tables/model.js';

export interface TargetSql {
  /** The table, quoted. */
  readonly table: string;
  /** The mapped columns, quoted, in column order. */
  readonly names: readonly string[];
  readonly keyNames: readonly string[];
  /** The mapped columns outside the key (indices). */
  readonly nonKeys: readonly number[];
  /** `INSERT INTO "t" ("a", "b") `: the rows follow. */
  readonly insertInto: string;
}

export function targetSql(mapping: CompiledMapping): TargetSql {
  const names = mapping.columns.map((c) => quoteIdent(c.field.name));
  const { keyColumns } = mapping;
  const table = quoteIdent(mapping.table.name);
  return {
    table,
    names,
    keyNames: keyColumns.map((k) => names[k]!),
    nonKeys: names.map((_, i) => i).filter((i) => !keyColumns.includes(i)),
    insertInto: `INSERT INTO ${table} (${names.join(', ')}) `,
  };
}

/** `c0, c1, …`: the mapped values of a row source, named by column position. */
export const valueAliases = (width: number): string[] => Array.from({ length: width }, (_, i) => `c${i}`);

/**
 * An upsert's conflict clause: a key already there gets the row's other values (`excluded` is the row
 * that was to be inserted). With only key columns mapped there is nothing to set: DO NOTHING.
 */
export const upsertClause = ({ keyNames, nonKeys, names }: TargetSql): string =>
  `ON CONFLICT (${keyNames.join(', ')}) ${
    nonKeys.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${nonKeys.map((i) => `${names[i]} = EXCLUDED.${names[i]}`).join(', ')}`
  }`;

/**
 * One `T` per distinct related table and field, indexed by column (undefined: no relation), so that
 * columns relating to the same key share one check and what it remembers.
 */
export function perRelation<T>(
  mapping: CompiledMapping,
  make: (relation: FieldRelation, column: CompiledColumn) => T,
): readonly (T | undefined)[] {
  const byRelation = new Map<string, T>();
  return mapping.columns.map((c) => {
    if (c.relation === null) return undefined;
    const key = `${c.relation.table}\u0000${c.relation.field}`;
    let made = byRelation.get(key);
    if (made === undefined) byRelation.set(key, (made = make(c.relation, c)));
    return made;
  });
}
