/**
 * Changing integrations, their fields and mappings. Each function validates with the pure rules in
 * `validate.ts`, checks what only the database knows (existence, uniqueness, bulk requests in
 * flight) and writes in one transaction. `declareIntegration` (declare.ts) is the declarative form
 * `ifw apply` uses; POST and PATCH `integrations` go through it too, so an integration with its fields
 * and mappings is one call under the same rules and messages as in the YAML. `checkNewIntegration` and
 * `checkIntegrationChange` run what Create and Save run, without writing (the console's live checks).
 *
 * One rule spans the integration and its mappings: an integration that accepts bulk import requests
 * has at least one mapping. Without one, every submission would be accepted (202) and then fail, so
 * switching the setting on, or removing the last mapping while it is on, is refused instead.
 */
import type { Clock } from '../core/clock.js';
import { conflict, invalidRequest, notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import type { TargetTable } from '../tables/model.js';
import { withTransaction } from '../storage/transaction.js';
import { getTargetTable } from '../tables/store.js';
import { invalidAt } from '../core/validation.js';
import type { Integration, IntegrationField, IntegrationMapping } from './model.js';
import {
  NO_MAPPINGS,
  planDeclaration,
  writeDeclaration,
  type DeclarationPlan,
  type IntegrationDeclaration,
  type IntegrationDeclared,
} from './declare.js';
import { deleteFieldRow, deleteMappingRow, fieldColumns, insertField, insertMapping, touch } from './rows.js';
import { getIntegration, getIntegrationField, getIntegrationMapping, listIntegrationFields, listIntegrationMappings } from './store.js';
import {
  validateField,
  validateMapping,
  type FieldInput,
  type FieldPatch,
  type IntegrationPatch,
  type MappingInput,
  type MappingPatch,
} from './validate.js';

// ---- lookups -------------------------------------------------------------------------------

async function requireIntegration(tx: Db, sortingOrder: number): Promise<Integration> {
  const integration = await getIntegration(tx, sortingOrder);
  if (integration === undefined) throw notFound(`No integration with sortingOrder ${sortingOrder}.`);
  return integration;
}

async function requireField(tx: Db, sortingOrder: number, fieldNo: number): Promise<IntegrationField> {
  await requireIntegration(tx, sortingOrder);
  const field = await getIntegrationField(tx, sortingOrder, fieldNo);
  if (field === undefined) throw notFound(`Integration ${sortingOrder} has no field ${fieldNo}.`);
  return field;
}

async function requireMapping(tx: Db, sortingOrder: number, fieldNo: number): Promise<IntegrationMapping> {
  await requireIntegration(tx, sortingOrder);
  const mapping = await getIntegrationMapping(tx, sortingOrder, fieldNo);
  if (mapping === undefined) throw notFound(`Integration ${sortingOrder} has no mapping for field ${fieldNo}.`);
  return mapping;
}

/** The integration's target table; it exists, since a declared table cannot be deleted while in use. */
async function targetTableOf(tx: Db, integration: Integration): Promise<TargetTable> {
  const table = await getTargetTable(tx, integration.targetTable);
  if (table === undefined)
    throw notFound(`Target table "${integration.targetTable}" of integration ${integration.sortingOrder} does not exist.`);
  return table;
}

async function refuseTakenTarget(tx: Db, mapping: IntegrationMapping): Promise<void> {
  const other = (await listIntegrationMappings(tx, mapping.integrationSortingOrder)).find(
    (m) => m.targetField === mapping.targetField && m.fieldNo !== mapping.fieldNo,
  );
  if (other !== undefined) {
    throw conflict(
      'conflict',
      `targetField: "${mapping.targetField}" already receives field ${other.fieldNo} of integration ${mapping.integrationSortingOrder}.`,
    );
  }
}

function refuseKeyChange(given: number | undefined, key: number, name: string): void {
  if (given !== undefined && given !== key) throw invalidAt(name, `cannot change from ${key} to ${given}; create a new one instead`);
}

/** The rule of the module header, for deleting the mapping of `fieldNo` (or the field with it). */
async function refuseLastMappingGone(tx: Db, sortingOrder: number, fieldNo: number, what: string): Promise<void> {
  const integration = await requireIntegration(tx, sortingOrder);
  if (!integration.acceptBulkImportRequests) return;
  const mappings = await listIntegrationMappings(tx, sortingOrder);
  if (mappings.length !== 1 || mappings[0]!.fieldNo !== fieldNo) return;
  throw invalidRequest(
    `Integration ${sortingOrder} accepts bulk import requests and ${what} its last mapping: without mappings ${NO_MAPPINGS}. Map another field first, or switch acceptBulkImportRequests off.`,
  );
}

// ---- integrations --------------------------------------------------------------------------

/** Creates the integration, with the fields and mappings the input lists (none when it lists none). */
export async function createIntegration(db: Db, input: IntegrationDeclaration, clock: Clock): Promise<IntegrationDeclared> {
  return withTransaction(db, async (tx) => writeDeclaration(tx, await planNew(tx, input), clock));
}

async function planNew(tx: Db, input: IntegrationDeclaration): Promise<DeclarationPlan> {
  if ((await getIntegration(tx, input.sortingOrder)) !== undefined) {
    throw conflict('conflict', `sortingOrder: an integration with sortingOrder ${input.sortingOrder} already exists.`);
  }
  return planDeclaration(tx, input, '');
}

/** Everything `createIntegration` checks, without writing: a live check that agrees with Create. */
export async function checkNewIntegration(db: Db, input: IntegrationDeclaration): Promise<void> {
  await planNew(db, input);
}

/** What PATCH `integrations(<n>)` takes: any settings, and optionally the whole set of fields or mappings. */
export type IntegrationChange = IntegrationPatch & Pick<IntegrationDeclaration, 'fields' | 'mappings'>;

/** Changes the settings the patch names; a `fields` or `mappings` list replaces that set. */
export async function updateIntegration(
  db: Db,
  sortingOrder: number,
  patch: IntegrationChange,
  clock: Clock,
): Promise<IntegrationDeclared> {
  return withTransaction(db, async (tx) => writeDeclaration(tx, await planChange(tx, sortingOrder, patch), clock));
}

async function planChange(tx: Db, sortingOrder: number, patch: IntegrationChange): Promise<DeclarationPlan> {
  const current = await requireIntegration(tx, sortingOrder);
  refuseKeyChange(patch.sortingOrder, sortingOrder, 'sortingOrder');
  return planDeclaration(tx, { ...current, ...patch, sortingOrder }, '');
}

/** Everything `updateIntegration` checks, without writing: a live check that agrees with Save. */
export async function checkIntegrationChange(db: Db, sortingOrder: number, patch: IntegrationChange): Promise<void> {
  await planChange(db, sortingOrder, patch);
}

/** Deletes the integration with its fields and mappings; refused while bulk import requests for it wait or run. */
export async function deleteIntegration(db: Db, sortingOrder: number): Promise<void> {
  await withTransaction(db, async (tx) => {
    await requireIntegration(tx, sortingOrder);
    const active = await tx
      .selectFrom('ifw_bulk_import_request')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('integration_sorting_order', '=', sortingOrder)
      .where('status', 'in', ['Pending', 'Processing'])
      .executeTakeFirstOrThrow();
    if (Number(active.count) > 0) {
      throw conflict(
        'conflict',
        `Integration ${sortingOrder} has ${active.count} bulk import request(s) Pending or Processing; let them finish or cancel them first.`,
      );
    }
    const feeding = await tx
      .selectFrom('ifw_rest_endpoint')
      .select('code')
      .where('integration_sorting_order', '=', sortingOrder)
      .orderBy('code')
      .execute();
    if (feeding.length > 0) {
      throw conflict(
        'conflict',
        `Integration ${sortingOrder} is fed by REST API endpoint(s) ${feeding.map((e) => `"${e.code}"`).join(', ')}; point them at another integration or delete them first.`,
      );
    }
    await tx.deleteFrom('ifw_integration_mapping').where('integration_sorting_order', '=', sortingOrder).execute();
    await tx.deleteFrom('ifw_integration_field').where('integration_sorting_order', '=', sortingOrder).execute();
    await tx.deleteFrom('ifw_integration').where('sorting_order', '=', sortingOrder).execute();
  });
}

// ---- fields --------------------------------------------------------------------------------

export async function createField(db: Db, sortingOrder: number, input: FieldInput, clock: Clock): Promise<IntegrationField> {
  return withTransaction(db, async (tx) => {
    await requireIntegration(tx, sortingOrder);
    const field = validateField(input, sortingOrder);
    if ((await getIntegrationField(tx, sortingOrder, field.fieldNo)) !== undefined) {
      throw conflict('conflict', `fieldNo: integration ${sortingOrder} already has field ${field.fieldNo}.`);
    }
    await insertField(tx, field);
    await touch(tx, sortingOrder, clock);
    return field;
  });
}

export async function updateField(
  db: Db,
  sortingOrder: number,
  fieldNo: number,
  patch: FieldPatch,
  clock: Clock,
): Promise<IntegrationField> {
  return withTransaction(db, async (tx) => {
    const current = await requireField(tx, sortingOrder, fieldNo);
    refuseKeyChange(patch.fieldNo, fieldNo, 'fieldNo');
    const next = validateField({ ...current, ...patch, fieldNo }, sortingOrder);
    await tx
      .updateTable('ifw_integration_field')
      .set(fieldColumns(next))
      .where('integration_sorting_order', '=', sortingOrder)
      .where('field_no', '=', fieldNo)
      .execute();
    await touch(tx, sortingOrder, clock);
    return next;
  });
}

/** Deletes the field and its mapping. */
export async function deleteField(db: Db, sortingOrder: number, fieldNo: number, clock: Clock): Promise<void> {
  await withTransaction(db, async (tx) => {
    await requireField(tx, sortingOrder, fieldNo);
    await refuseLastMappingGone(tx, sortingOrder, fieldNo, `field ${fieldNo} holds`);
    await deleteFieldRow(tx, sortingOrder, fieldNo);
    await touch(tx, sortingOrder, clock);
  });
}

// ---- mappings ------------------------------------------------------------------------------

async function mappingContext(tx: Db, integration: Integration) {
  const fields = await listIntegrationFields(tx, integration.sortingOrder);
  return {
    integrationSortingOrder: integration.sortingOrder,
    fieldNos: new Set(fields.map((f) => f.fieldNo)),
    table: await targetTableOf(tx, integration),
  };
}

export async function createMapping(db: Db, sortingOrder: number, input: MappingInput, clock: Clock): Promise<IntegrationMapping> {
  return withTransaction(db, async (tx) => {
    const integration = await requireIntegration(tx, sortingOrder);
    const mapping = validateMapping(input, await mappingContext(tx, integration));
    if ((await getIntegrationMapping(tx, sortingOrder, mapping.fieldNo)) !== undefined) {
      throw conflict(
        'conflict',
        `fieldNo: field ${mapping.fieldNo} of integration ${sortingOrder} is already mapped; change that mapping instead.`,
      );
    }
    await refuseTakenTarget(tx, mapping);
    await insertMapping(tx, mapping);
    await touch(tx, sortingOrder, clock);
    return mapping;
  });
}

export async function updateMapping(
  db: Db,
  sortingOrder: number,
  fieldNo: number,
  patch: MappingPatch,
  clock: Clock,
): Promise<IntegrationMapping> {
  return withTransaction(db, async (tx) => {
    const current = await requireMapping(tx, sortingOrder, fieldNo);
    refuseKeyChange(patch.fieldNo, fieldNo, 'fieldNo');
    const next = validateMapping({ ...current, ...patch, fieldNo }, await mappingContext(tx, await requireIntegration(tx, sortingOrder)));
    await refuseTakenTarget(tx, next);
    await tx
      .updateTable('ifw_integration_mapping')
      .set({ target_field: next.targetField, required: next.required ? 1 : 0 })
      .where('integration_sorting_order', '=', sortingOrder)
      .where('field_no', '=', fieldNo)
      .execute();
    await touch(tx, sortingOrder, clock);
    return next;
  });
}

export async function deleteMapping(db: Db, sortingOrder: number, fieldNo: number, clock: Clock): Promise<void> {
  await withTransaction(db, async (tx) => {
    await requireMapping(tx, sortingOrder, fieldNo);
    await refuseLastMappingGone(tx, sortingOrder, fieldNo, `the mapping of field ${fieldNo} is`);
    await deleteMappingRow(tx, sortingOrder, fieldNo);
    await touch(tx, sortingOrder, clock);
  });
}

export { declareIntegration, type IntegrationDeclaration, type IntegrationDeclared } from './declare.js';
