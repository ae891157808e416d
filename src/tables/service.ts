/**
 * Declaring and deleting target tables: the declaration in `ifw_target_table` and the real SQL table
 * change together, in one transaction (DDL is transactional on SQLite and PostgreSQL alike).
 *
 * Required fields are NOT NULL columns, so a change of `required` changes the SQL table too. On
 * PostgreSQL that is an ALTER COLUMN in place. SQLite cannot alter a column's constraints, so there
 * such a change rebuilds the table: an empty table is dropped and created again; a table with rows is
 * copied into a new one, which is refused when another table relates to it (dropping a parent with
 * rows would break the references). On both, a new required field is accepted only while the table is
 * empty (existing rows would have no value).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../core/clock.js';
import { conflict, notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { capabilitiesOf } from '../storage/db.js';
import {
  addColumnSql,
  alterNullabilitySql,
  createTableSql,
  dropTableSql,
  hasNulls,
  hasRows,
  rebuildTableSql,
  sqlTableExists,
} from './ddl.js';
import type { TargetTable } from './model.js';
import { getTargetTable, listTargetTables } from './store.js';
import { incompatibleAt, pathOf, type ChangeResult } from '../core/validation.js';
import { withTransaction } from '../storage/transaction.js';
import { planTableChange, validateTargetTable, type TableChangePlan, type TargetTableInput } from './validate.js';

export interface TableDeclared {
  readonly table: TargetTable;
  readonly result: ChangeResult;
  readonly addedFields: readonly string[];
}

const execute = async (db: Db, statement: string): Promise<void> => {
  await sql.raw(statement).execute(db);
};

const found = async (db: Db, query: RawBuilder<unknown>): Promise<boolean> => (await query.execute(db)).rows.length > 0;

async function relatedTables(db: Db, input: TargetTableInput): Promise<Map<string, TargetTable>> {
  const related = new Map<string, TargetTable>();
  for (const f of input.fields) {
    if (f.relation === undefined || related.has(f.relation.table)) continue;
    const table = await getTargetTable(db, f.relation.table);
    if (table !== undefined) related.set(table.name, table);
  }
  return related;
}

/** Other declared tables with a relation to `name`. */
async function tablesRelatingTo(db: Db, name: string): Promise<string[]> {
  const tables = await listTargetTables(db);
  return tables.filter((t) => t.name !== name && t.fields.some((f) => f.relation?.table === name)).map((t) => t.name);
}

export async function createTargetTable(db: Db, input: TargetTableInput, clock: Clock): Promise<TargetTable> {
  return withTransaction(db, async (tx) => {
    if ((await getTargetTable(tx, input.name)) !== undefined) {
      throw conflict('conflict', `Target table "${input.name}" already exists; redeclare it with PUT targetTables('${input.name}').`);
    }
    return (await declareTargetTable(tx, input, clock)).table;
  });
}

/** Creates the table, adds new fields, or finds nothing to do; refuses changes that would lose or reinterpret data. */
export async function declareTargetTable(db: Db, input: TargetTableInput, clock: Clock, at = ''): Promise<TableDeclared> {
  return withTransaction(db, async (tx) => {
    const next = validateTargetTable(input, await relatedTables(tx, input), at);
    const now = clock().toISOString();
    const current = await getTargetTable(tx, next.name);
    if (current === undefined) {
      const existing = await sqlTableExists(next.name, tx.dialect).execute(tx);
      if (existing.rows.length > 0) {
        throw conflict(
          'conflict',
          `${pathOf(at, 'name')}: the database already has a table or view "${existing.rows[0]!.name}" that is not a declared target table`,
        );
      }
      await execute(tx, createTableSql(next, tx.dialect));
      await tx
        .insertInto('ifw_target_table')
        .values({ name: next.name, definition: JSON.stringify(next), created_at: now, updated_at: now })
        .execute();
      return { table: next, result: 'created', addedFields: next.fields.map((f) => f.name) };
    }

    const plan = planTableChange(current, next, at);
    if (plan.unchanged) return { table: current, result: 'unchanged', addedFields: [] };
    await changeSqlTable(tx, current, next, plan, at);
    await tx
      .updateTable('ifw_target_table')
      .set({ definition: JSON.stringify(next), updated_at: now })
      .where('name', '=', next.name)
      .execute();
    return { table: next, result: 'updated', addedFields: plan.addedFields.map((f) => f.name) };
  });
}

async function changeSqlTable(tx: Db, current: TargetTable, next: TargetTable, plan: TableChangePlan, at: string): Promise<void> {
  const populated = await found(tx, hasRows(current.name));
  if (populated) {
    for (const added of plan.addedFields) {
      if (added.required !== true) continue;
      const where = pathOf(pathOf(at, 'fields'), next.fields.indexOf(added));
      throw incompatibleAt(
        where,
        `new field "${added.name}" cannot be required: table "${current.name}" has rows, which would have no value. Add it without required, fill it, then make it required`,
      );
    }
    for (const change of plan.requiredChanges) {
      if (change.required && (await found(tx, hasNulls(current.name, change.field)))) {
        const where = pathOf(
          pathOf(at, 'fields'),
          next.fields.findIndex((f) => f.name === change.field),
        );
        throw incompatibleAt(
          where,
          `field "${change.field}" cannot become required: some rows of table "${current.name}" have no value in it`,
        );
      }
    }
  }

  if (capabilitiesOf(tx).alterColumnNullability) {
    // The checks above refused a NOT NULL that rows would violate; the table is empty when a new field is required.
    for (const added of plan.addedFields) await execute(tx, addColumnSql(next, added, tx.dialect, added.required === true));
    for (const statement of alterNullabilitySql(current, next)) await execute(tx, statement);
    return;
  }
  if (plan.requiredChanges.length === 0 && !plan.addedFields.some((f) => f.required === true)) {
    for (const added of plan.addedFields) await execute(tx, addColumnSql(next, added, tx.dialect));
    return;
  }
  if (!populated) {
    await execute(tx, dropTableSql(current.name));
    await execute(tx, createTableSql(next, tx.dialect));
    return;
  }
  const relating = await tablesRelatingTo(tx, current.name);
  if (current.fields.some((f) => f.relation?.table === current.name)) relating.push(current.name);
  if (relating.length > 0) {
    const fields = plan.requiredChanges.map((c) => `"${c.field}"`).join(', ');
    throw incompatibleAt(
      pathOf(at, 'fields'),
      `required cannot change for ${fields}: table "${current.name}" has rows and ${relating.map((t) => `"${t}"`).join(', ')} relate to it, so its NOT NULL constraints cannot be rebuilt`,
    );
  }
  for (const statement of rebuildTableSql(current, next, tx.dialect)) await execute(tx, statement);
}

/** Drops the SQL table and its declaration; refused while an integration writes to it or another table relates to it. */
export async function deleteTargetTable(db: Db, name: string): Promise<void> {
  await withTransaction(db, async (tx) => {
    if ((await getTargetTable(tx, name)) === undefined) throw notFound(`No target table "${name}".`);
    const users = await tx
      .selectFrom('ifw_integration')
      .select('sorting_order')
      .where('target_table', '=', name)
      .orderBy('sorting_order')
      .execute();
    if (users.length > 0) {
      throw conflict(
        'conflict',
        `Target table "${name}" is used by integration(s) ${users.map((u) => u.sorting_order).join(', ')}; delete them or point them at another table first.`,
      );
    }
    const relating = await tablesRelatingTo(tx, name);
    if (relating.length > 0) {
      throw conflict('conflict', `Target table "${name}" cannot be deleted: ${relating.map((t) => `"${t}"`).join(', ')} relate to it.`);
    }
    await execute(tx, dropTableSql(name));
    await tx.deleteFrom('ifw_target_table').where('name', '=', name).execute();
  });
}
