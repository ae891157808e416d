/** Reading target table declarations (stored as JSON in `ifw_target_table`). */
import type { Db } from '../storage/db.js';
import type { TargetTable } from './model.js';

export async function getTargetTable(db: Db, name: string): Promise<TargetTable | undefined> {
  const row = await db.selectFrom('ifw_target_table').select('definition').where('name', '=', name).executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.definition) as TargetTable);
}

export async function listTargetTables(db: Db): Promise<TargetTable[]> {
  const rows = await db.selectFrom('ifw_target_table').select('definition').orderBy('name').execute();
  return rows.map((r) => JSON.parse(r.definition) as TargetTable);
}

/** The table and every table it relates to (transitively), keyed by name: what an import validates against. */
export async function getTableWithRelations(db: Db, name: string): Promise<ReadonlyMap<string, TargetTable>> {
  const tables = new Map<string, TargetTable>();
  const pending = [name];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (tables.has(next)) continue;
    const table = await getTargetTable(db, next);
    if (table === undefined) continue;
    tables.set(next, table);
    for (const f of table.fields) if (f.relation !== undefined) pending.push(f.relation.table);
  }
  return tables;
}
