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

/**
 * What declaring `input` takes, decided and checked against the stored declaration and the rows
 * without writing anything: the normalized table, what changes, and the statements that make the
 * change. Every refusal a declaration can meet is raised here, so a preview and a save cannot disagree.
 */
interface Decision {
  readonly table: TargetTable;
  readonly result: ChangeResult;
  readonly addedFields: readonly string[];
  readonly requiredChanges: TableChangePlan['requiredChanges'];
  readonly statements: readonly string[];
  /** SQLite only: the table is copied into a new one, because its NOT NULL constraints change while it has rows. */
  readonly rebuild: boolean;
}

async function decide(db: Db, input: TargetTableInput, at: string): Promise<Decision> {
  const next = validateTargetTable(input, await relatedTables(db, input), at);
  const current = await getTargetTable(db, next.name);
  if (current === undefined) {
    const existing = await sqlTableExists(next.name, db.dialect).execute(db);
    if (existing.rows.length > 0) {
      throw conflict(
        'conflict',
        `${pathOf(at, 'name')}: the database already has a table or view "${existing.rows[0]!.name}" that is not a declared target table`,
      );
    }
    return {
      table: next,
      result: 'created',
      addedFields: next.fields.map((f) => f.name),
      requiredChanges: [],
      statements: [createTableSql(next, db.dialect)],
      rebuild: false,
    };
  }
  const plan = planTableChange(current, next, at);
  if (plan.unchanged) return { table: current, result: 'unchanged', addedFields: [], requiredChanges: [], statements: [], rebuild: false };
  const change = await sqlChange(db, current, next, plan, at);
  return {
    table: next,
    result: 'updated',
    addedFields: plan.addedFields.map((f) => f.name),
    requiredChanges: plan.requiredChanges,
    ...change,
  };
}

/** What declaring `input` would do, or the refusal a declaration would meet (thrown as it would be); nothing is written. */
export interface TablePreview {
  readonly table: TargetTable;
  readonly result: ChangeResult;
  readonly addedFields: readonly string[];
  readonly requiredChanges: TableChangePlan['requiredChanges'];
  readonly rebuild: boolean;
}

export async function previewTargetTable(db: Db, input: TargetTableInput, at = ''): Promise<TablePreview> {
  const d = await decide(db, input, at);
  return { table: d.table, result: d.result, addedFields: d.addedFields, requiredChanges: d.requiredChanges, rebuild: d.rebuild };
}

/** Creates the table, adds new fields, or finds nothing to do; refuses changes that would lose or reinterpret data. */
export async function declareTargetTable(db: Db, input: TargetTableInput, clock: Clock, at = ''): Promise<TableDeclared> {
  return withTransaction(db, async (tx) => {
    const decision = await decide(tx, input, at);
    if (decision.result === 'unchanged') return { table: decision.table, result: 'unchanged', addedFields: [] };
    const now = clock().toISOString();
    for (const statement of decision.statements) await execute(tx, statement);
    const definition = JSON.stringify(decision.table);
    if (decision.result === 'created') {
      await tx.insertInto('ifw_target_table').values({ name: decision.table.name, definition, created_at: now, updated_at: now }).execute();
    } else {
      await tx.updateTable('ifw_target_table').set({ definition, updated_at: now }).where('name', '=', decision.table.name).execute();
    }
    return { table: decision.table, result: decision.result, addedFields: decision.addedFields };
  });
}

/** The statements that change the SQL table, after refusing what the rows do not allow. */
async function sqlChange(
  db: Db,
  current: TargetTable,
  next: TargetTable,
  plan: TableChangePlan,
  at: string,
): Promise<{ statements: string[]; rebuild: boolean }> {
  const populated = await found(db, hasRows(current.name));
  if (populated) {
    for (const added of plan.addedFields) {
      if (added.required !== true) continue;
      const where = pathOf(pathOf(pathOf(at, 'fields'), next.fields.indexOf(added)), 'required');
      throw incompatibleAt(
        where,
        `new field "${added.name}" cannot be required: table "${current.name}" has rows, which would have no value. Add it without required, fill it, then make it required`,
      );
    }
    for (const change of plan.requiredChanges) {
      if (change.required && (await found(db, hasNulls(current.name, change.field)))) {
        const where = pathOf(
          pathOf(
            pathOf(at, 'fields'),
            next.fields.findIndex((f) => f.name === change.field),
          ),
          'required',
        );
        throw incompatibleAt(
          where,
          `field "${change.field}" cannot become required: some rows of table "${current.name}" have no value in it`,
        );
      }
    }
  }

  if (capabilitiesOf(db).alterColumnNullability) {
    // The checks above refused a NOT NULL that rows would violate; the table is empty when a new field is required.
    return {
      statements: [
        ...plan.addedFields.map((added) => addColumnSql(next, added, db.dialect, added.required === true)),
        ...alterNullabilitySql(current, next),
      ],
      rebuild: false,
    };
  }
  if (plan.requiredChanges.length === 0 && !plan.addedFields.some((f) => f.required === true)) {
    return { statements: plan.addedFields.map((added) => addColumnSql(next, added, db.dialect)), rebuild: false };
  }
  if (!populated) return { statements: [dropTableSql(current.name), createTableSql(next, db.dialect)], rebuild: false };
  const relating = await tablesRelatingTo(db, current.name);
  if (current.fields.some((f) => f.relation?.table === current.name)) relating.push(current.name);
  if (relating.length > 0) {
    const fields = plan.requiredChanges.map((c) => `"${c.field}"`).join(', ');
    throw incompatibleAt(
      pathOf(at, 'fields'),
      `required cannot change for ${fields}: table "${current.name}" has rows and ${relating.map((t) => `"${t}"`).join(', ')} relate to it, so its NOT NULL constraints cannot be rebuilt`,
    );
  }
  return { statements: rebuildTableSql(current, next, db.dialect), rebuild: true };
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
