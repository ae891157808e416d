/**
 * What the database refused, in the service's own words and the same on both databases. A row can be
 * refused although its declaration allowed it (a constraint added to the table by hand, a row another
 * transaction wrote or deleted meanwhile, a value outside what a column holds), and a table can be
 * missing or lack a mapped column (dropped by hand). The database's own message never reaches a record
 * error or an answer: it names internals, differs between SQLite and PostgreSQL, and is no help to the
 * person who must fix the record. Each dialect says which kind it saw (sqlite/statements.ts,
 * postgres/client.ts); the words are here.
 */
export type Refusal =
  | { readonly kind: 'unique' | 'foreignKey' | 'check' | 'value' | 'other' }
  /** The column, when the database names it (both do). */
  | { readonly kind: 'notNull'; readonly column: string | undefined };

/** A dialect's error codes, each with the kind of refusal it is; a code not listed is 'other'. */
export type RefusalCodes = Readonly<Record<string, Refusal['kind']>>;

/** The refusal an error code says, with the column of a NOT NULL refusal (when the error names it). */
export function refusalOf(codes: RefusalCodes, code: string | undefined, column: () => string | undefined): Refusal {
  const kind = (code === undefined ? undefined : codes[code]) ?? 'other';
  return kind === 'notNull' ? { kind, column: column() } : { kind };
}

/** The rule a refused record broke, for `record N: <rule>`. */
export function refusalRule(table: string, refusal: Refusal): string {
  switch (refusal.kind) {
    case 'unique':
      return `conflicts with a row of table "${table}" that has the same value in a unique column`;
    case 'foreignKey':
      return `refers to a row that does not exist in a table that table "${table}" relates to`;
    case 'notNull':
      return refusal.column === undefined
        ? `leaves a column empty that table "${table}" requires`
        : `leaves column "${refusal.column}" empty, which table "${table}" requires`;
    case 'check':
      return `breaks a rule of table "${table}" (a CHECK constraint added to the table)`;
    case 'value':
      return `holds a value that a column of table "${table}" cannot store`;
    case 'other':
      return `was refused by the database (table "${table}")`;
    default: {
      const never: never = refusal;
      throw new Error(`unknown refusal ${JSON.stringify(never)}`);
    }
  }
}

/** A table or column the import needs and the database does not have. */
export type MissingObject = { readonly table: string } | { readonly column: string } | 'unknown';

/** Why a table cannot be written, for `cannot write to table "x": <reason>`. */
export function missingObjectReason(missing: MissingObject): string {
  if (missing === 'unknown') return 'a table or column it needs does not exist';
  if ('table' in missing) return `table "${missing.table}" does not exist`;
  return `column "${missing.column}" does not exist`;
}
