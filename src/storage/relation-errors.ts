/**
 * Database errors that mean a table or column named at run time is gone: a target table dropped (or a
 * field removed) between the lookup of its declaration and the statement that reads it. Callers turn
 * them into a 404 or 409 instead of an internal error.
 */
export type MissingRelation = 'table' | 'column';

export function missingRelation(err: unknown): MissingRelation | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  // PostgreSQL: undefined_table, undefined_column.
  if (code === '42P01') return 'table';
  if (code === '42703') return 'column';
  // SQLite (better-sqlite3): SQLITE_ERROR with the reason in the message.
  if (code === 'SQLITE_ERROR') {
    if (/^no such table\b/.test(err.message)) return 'table';
    if (/^no such column\b/.test(err.message)) return 'column';
  }
  return undefined;
}
