/**
 * Changing integrations, their fields and mappings. Each function validates with the pure rules in
 * `validate.ts`, checks what only the database knows (existence, uniqueness, bulk requests in
 * flight) and writes in one transaction. `declareIntegration` is the declarative form `ifw apply` uses;
 * POST and PATCH `integrations` go through it too, so an integration with its fields and mappings is
 * one call under the same rules and messages as in the YAML.
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
import { incompatibleAt, invalidAt, pathOf, sameJson as same, type ChangeResult } from '../core/validation.js';
import type { Integration, IntegrationField, IntegrationMapping, IntegrationPlan } from './model.js';
import { deleteFieldRow, deleteMappingRow, fieldColumns, insertField, insertMapping, integrationColumns, touch } from './rows.js';
import {
  getIntegration,
  getIntegrationField,
  getIntegrationMapping,
  getIntegrationPlan,
  listIntegrationFields,
  listIntegrationMappings,
} from './store.js';
import {
  validateField,
  validateFieldList,
  validateIntegration,
  validateMapping,
  validateMappingList,
  type FieldInput,
  type FieldPatch,
  type IntegrationInput,
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

function refuseMisfits(mappings: readonly IntegrationMapping[], table: TargetTable, at: string): void {
  const misfits = mappings.filter((m) => !table.fields.some((f) => f.name === m.targetField));
  if (misfits.length === 0) return;
  const list = misfits.map((m) => `field ${m.fieldNo} → "${m.targetField}"`).join(', ');
  throw incompatibleAt(at, `table "${table.name}" has no field for mapping(s) ${list}; change or delete those mappings first`);
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

const NO_MAPPINGS = 'every bulk import request would be accepted and then fail';

/** The rule of the module header, for a declaration: the integration as it will be stored. */
function refuseBulkWithoutMappings(integration: Integration, mappings: readonly IntegrationMapping[], at: string): void {
  if (!integration.acceptBulkImportRequests || mappings.length > 0) return;
  throw invalidAt(
    pathOf(at, 'acceptBulkImportRequests'),
    `integration ${integration.sortingOrder} has no mappings, so ${NO_MAPPINGS}; map at least one field (mappings) first, or leave acceptBulkImportRequests off`,
  );
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

// ---- declarative form ----------------------------------------------------------------------

export interface IntegrationDeclaration extends IntegrationInput {
  /** When given, these are the integration's fields: others are removed. When absent, fields are left alone. */
  readonly fields?: readonly FieldInput[];
  /** When given, these are the integration's mappings: others are removed. When absent, they are left alone. */
  readonly mappings?: readonly MappingInput[];
}

export interface IntegrationDeclared {
  readonly integration: Integration;
  /** The fields and mappings the integration has now. */
  readonly fields: readonly IntegrationField[];
  readonly mappings: readonly IntegrationMapping[];
  readonly result: ChangeResult;
  /** What changed, for a person to read: `field 3 added`, `mapping of field 2 removed`, … */
  readonly changes: readonly string[];
}

/** Creates or updates the integration so that it is exactly as declared; `at` prefixes messages with the document path. */
export async function declareIntegration(db: Db, input: IntegrationDeclaration, clock: Clock, at = ''): Promise<IntegrationDeclared> {
  return withTransaction(db, async (tx) => writeDeclaration(tx, await planDeclaration(tx, input, at), clock));
}

/** A declaration checked against the rules and the database: what it would store, and what is stored. */
interface DeclarationPlan {
  readonly next: Integration;
  readonly current: IntegrationPlan | undefined;
  readonly fields: readonly IntegrationField[];
  readonly mappings: readonly IntegrationMapping[];
}

async function planDeclaration(tx: Db, input: IntegrationDeclaration, at: string): Promise<DeclarationPlan> {
  const table = await getTargetTable(tx, input.targetTable);
  const next = validateIntegration(input, table, at);
  const sortingOrder = next.sortingOrder;
  const current = await getIntegrationPlan(tx, sortingOrder);
  const fields = input.fields !== undefined ? validateFieldList(input.fields, sortingOrder, pathOf(at, 'fields')) : (current?.fields ?? []);
  const fieldNos = new Set(fields.map((f) => f.fieldNo));
  let mappings: readonly IntegrationMapping[];
  if (input.mappings !== undefined) {
    mappings = validateMappingList(
      input.mappings,
      { integrationSortingOrder: sortingOrder, fieldNos, table: table! },
      pathOf(at, 'mappings'),
    );
  } else {
    // Mappings of removed fields go with them; the others must still fit the (possibly new) table.
    mappings = (current?.mappings ?? []).filter((m) => fieldNos.has(m.fieldNo));
    refuseMisfits(mappings, table!, pathOf(at, 'targetTable'));
  }
  refuseBulkWithoutMappings(next, mappings, at);
  return { next, current, fields, mappings };
}

async function writeDeclaration(tx: Db, plan: DeclarationPlan, clock: Clock): Promise<IntegrationDeclared> {
  const { next, current, fields, mappings } = plan;
  const sortingOrder = next.sortingOrder;
  const now = clock().toISOString();
  const changes: string[] = [];
  if (current === undefined) {
    await tx
      .insertInto('ifw_integration')
      .values({ sorting_order: sortingOrder, ...integrationColumns(next), created_at: now, updated_at: now })
      .execute();
  } else if (!same(current.integration, next)) {
    const keys = Object.keys(next) as (keyof Integration)[];
    changes.push(`settings changed: ${keys.filter((k) => current.integration[k] !== next[k]).join(', ')}`);
    await tx.updateTable('ifw_integration').set(integrationColumns(next)).where('sorting_order', '=', sortingOrder).execute();
  }

  const oldMappings = current?.mappings ?? [];
  for (const old of oldMappings) {
    const wanted = mappings.find((m) => m.fieldNo === old.fieldNo);
    if (wanted !== undefined && same(wanted, old)) continue;
    // Changed mappings are deleted and inserted again so that swapping two target fields never collides.
    await deleteMappingRow(tx, sortingOrder, old.fieldNo);
    if (wanted === undefined) changes.push(`mapping of field ${old.fieldNo} removed`);
  }
  const oldFields = current?.fields ?? [];
  for (const old of oldFields) {
    const wanted = fields.find((f) => f.fieldNo === old.fieldNo);
    if (wanted === undefined) {
      await deleteFieldRow(tx, sortingOrder, old.fieldNo);
      changes.push(`field ${old.fieldNo} removed`);
    } else if (!same(wanted, old)) {
      await tx
        .updateTable('ifw_integration_field')
        .set(fieldColumns(wanted))
        .where('integration_sorting_order', '=', sortingOrder)
        .where('field_no', '=', old.fieldNo)
        .execute();
      changes.push(`field ${old.fieldNo} changed`);
    }
  }
  for (const f of fields) {
    if (oldFields.some((o) => o.fieldNo === f.fieldNo)) continue;
    await insertField(tx, f);
    changes.push(`field ${f.fieldNo} added`);
  }
  for (const m of mappings) {
    const old = oldMappings.find((o) => o.fieldNo === m.fieldNo);
    if (old !== undefined && same(old, m)) continue;
    await insertMapping(tx, m);
    changes.push(`mapping of field ${m.fieldNo} ${old === undefined ? 'added' : 'changed'}`);
  }

  if (current === undefined) return { integration: next, fields, mappings, result: 'created', changes: [] };
  if (changes.length > 0) await touch(tx, sortingOrder, clock);
  return { integration: next, fields, mappings, result: changes.length > 0 ? 'updated' : 'unchanged', changes };
}
