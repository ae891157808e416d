/**
 * Reading a target table's rows through the API, so an administrator can see what imports wrote
 * without a database client. Values come back typed as declared (booleans as true/false).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../storage/schema.js';
import type { TargetTable } from './model.js';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function readTableRows(
  db: Kysely<DB>,
  table: TargetTable,
  page: { skip: number; limit: number },
): Promise<Record<string, unknown>[]> {
  const columns = table.fields.map((f) => quote(f.name)).join(', ');
  const order = table.primaryKey.map(quote).join(', ');
  const { rows } = await sql<
    Record<string, unknown>
  >`select ${sql.raw(columns)} from ${sql.raw(quote(table.name))} order by ${sql.raw(order)} limit ${page.limit} offset ${page.skip}`.execute(
    db,
  );
  const booleans = table.fields.filter((f) => f.type === 'boolean').map((f) => f.name);
  if (booleans.length > 0) {
    for (const row of rows) for (const name of booleans) if (row[name] !== null) row[name] = row[name] === 1;
  }
  return rows;
}
