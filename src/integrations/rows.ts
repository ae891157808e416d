/** Writing the rows of integrations, their fields and mappings (the service decides what to write). */
import type { Clock } from '../core/clock.js';
import type { Db } from '../storage/db.js';
import type { Integration, IntegrationField, IntegrationMapping } from './model.js';

export const integrationColumns = (i: Integration) => ({
  name: i.name,
  type: i.type,
  target_table: i.targetTable,
  records_path: i.recordsPath,
  accept_bulk_import: i.acceptBulkImportRequests ? 1 : 0,
  max_payload_size_kb: i.maxPayloadSizeKb,
  write_mode: i.writeMode,
  on_record_error: i.onRecordError,
});

export const fieldColumns = (f: IntegrationField) => ({
  title: f.title,
  source_path: f.sourcePath,
  column_type: f.columnType,
  constant_value: f.constantValue,
});

export async function insertField(tx: Db, f: IntegrationField): Promise<void> {
  await tx
    .insertInto('ifw_integration_field')
    .values({ integration_sorting_order: f.integrationSortingOrder, field_no: f.fieldNo, ...fieldColumns(f) })
    .execute();
}

export async function insertMapping(tx: Db, m: IntegrationMapping): Promise<void> {
  await tx
    .insertInto('ifw_integration_mapping')
    .values({
      integration_sorting_order: m.integrationSortingOrder,
      field_no: m.fieldNo,
      target_field: m.targetField,
      required: m.required ? 1 : 0,
    })
    .execute();
}

export async function deleteMappingRow(tx: Db, sortingOrder: number, fieldNo: number): Promise<void> {
  await tx
    .deleteFrom('ifw_integration_mapping')
    .where('integration_sorting_order', '=', sortingOrder)
    .where('field_no', '=', fieldNo)
    .execute();
}

export async function deleteFieldRow(tx: Db, sortingOrder: number, fieldNo: number): Promise<void> {
  await deleteMappingRow(tx, sortingOrder, fieldNo);
  await tx
    .deleteFrom('ifw_integration_field')
    .where('integration_sorting_order', '=', sortingOrder)
    .where('field_no', '=', fieldNo)
    .execute();
}

/** A change to fields or mappings is a change to the integration. */
export async function touch(tx: Db, sortingOrder: number, clock: Clock): Promise<void> {
  await tx.updateTable('ifw_integration').set({ updated_at: clock().toISOString() }).where('sorting_order', '=', sortingOrder).execute();
}
