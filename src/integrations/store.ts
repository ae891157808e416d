/** Reading integrations, their fields and mappings: storage rows to the model. */
import { sql, type Selectable } from 'kysely';
import type { IntegrationFieldRow, IntegrationMappingRow, IntegrationRow } from '../storage/schema.js';
import type {
  ColumnType,
  Integration,
  IntegrationField,
  IntegrationMapping,
  IntegrationPlan,
  IntegrationType,
  OnRecordError,
  WriteMode,
} from './model.js';
import type { Db } from '../storage/db.js';

export function toIntegration(row: Selectable<IntegrationRow>): Integration {
  return {
    sortingOrder: row.sorting_order,
    name: row.name,
    type: row.type as IntegrationType,
    targetTable: row.target_table,
    recordsPath: row.records_path,
    acceptBulkImportRequests: row.accept_bulk_import === 1,
    maxPayloadSizeKb: row.max_payload_size_kb,
    writeMode: row.write_mode as WriteMode,
    onRecordError: row.on_record_error as OnRecordError,
  };
}

export function toIntegrationField(row: Selectable<IntegrationFieldRow>): IntegrationField {
  return {
    integrationSortingOrder: row.integration_sorting_order,
    fieldNo: row.field_no,
    title: row.title,
    sourcePath: row.source_path,
    columnType: row.column_type as ColumnType,
    constantValue: row.constant_value,
  };
}

export function toIntegrationMapping(row: Selectable<IntegrationMappingRow>): IntegrationMapping {
  return {
    integrationSortingOrder: row.integration_sorting_order,
    fieldNo: row.field_no,
    targetField: row.target_field,
    required: row.required === 1,
  };
}

/**
 * `getIntegration` for a hot path (every submission): a `sql` template, whose compiling is cheaper
 * than the query builder's.
 */
export function prepareIntegrationLookup(db: Db): (sortingOrder: number) => Promise<Integration | undefined> {
  return async (sortingOrder) => {
    const { rows } = await sql<Selectable<IntegrationRow>>`select * from "ifw_integration" where "sorting_order" = ${sortingOrder}`.execute(
      db,
    );
    return rows[0] === undefined ? undefined : toIntegration(rows[0]);
  };
}

export async function getIntegration(db: Db, sortingOrder: number): Promise<Integration | undefined> {
  const row = await db.selectFrom('ifw_integration').selectAll().where('sorting_order', '=', sortingOrder).executeTakeFirst();
  return row === undefined ? undefined : toIntegration(row);
}

export async function listIntegrations(db: Db): Promise<Integration[]> {
  const rows = await db.selectFrom('ifw_integration').selectAll().orderBy('sorting_order').execute();
  return rows.map(toIntegration);
}

export async function listIntegrationFields(db: Db, sortingOrder: number): Promise<IntegrationField[]> {
  const rows = await db
    .selectFrom('ifw_integration_field')
    .selectAll()
    .where('integration_sorting_order', '=', sortingOrder)
    .orderBy('field_no')
    .execute();
  return rows.map(toIntegrationField);
}

export async function getIntegrationField(db: Db, sortingOrder: number, fieldNo: number): Promise<IntegrationField | undefined> {
  const row = await db
    .selectFrom('ifw_integration_field')
    .selectAll()
    .where('integration_sorting_order', '=', sortingOrder)
    .where('field_no', '=', fieldNo)
    .executeTakeFirst();
  return row === undefined ? undefined : toIntegrationField(row);
}

export async function listIntegrationMappings(db: Db, sortingOrder: number): Promise<IntegrationMapping[]> {
  const rows = await db
    .selectFrom('ifw_integration_mapping')
    .selectAll()
    .where('integration_sorting_order', '=', sortingOrder)
    .orderBy('field_no')
    .execute();
  return rows.map(toIntegrationMapping);
}

export async function getIntegrationMapping(db: Db, sortingOrder: number, fieldNo: number): Promise<IntegrationMapping | undefined> {
  const row = await db
    .selectFrom('ifw_integration_mapping')
    .selectAll()
    .where('integration_sorting_order', '=', sortingOrder)
    .where('field_no', '=', fieldNo)
    .executeTakeFirst();
  return row === undefined ? undefined : toIntegrationMapping(row);
}

export async function getIntegrationPlan(db: Db, sortingOrder: number): Promise<IntegrationPlan | undefined> {
  const integration = await getIntegration(db, sortingOrder);
  if (integration === undefined) return undefined;
  const fields = await listIntegrationFields(db, sortingOrder);
  const mappings = await listIntegrationMappings(db, sortingOrder);
  return { integration, fields, mappings };
}
