/**
 * An integration as declared: its settings with, optionally, the whole set of its fields and mappings
 * (`ifw apply`, POST and PATCH `integrations`, the console's card). Planned first (the rules of
 * validate.ts and what only the database knows), then written so that the stored integration is
 * exactly as declared. One rule spans the integration and its mappings: one that accepts bulk import
 * requests has at least one mapping, or every submission would be accepted (202) and then fail.
 */
import type { Clock } from '../core/clock.js';
import { incompatibleAt, invalidAt, pathOf, sameJson as same, type ChangeResult } from '../core/validation.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import type { TargetTable } from '../tables/model.js';
import { getTargetTable } from '../tables/store.js';
import type { Integration, IntegrationField, IntegrationMapping, IntegrationPlan } from './model.js';
import { deleteFieldRow, deleteMappingRow, fieldColumns, insertField, insertMapping, integrationColumns, touch } from './rows.js';
import { getIntegrationPlan } from './store.js';
import {
  validateFieldList,
  validateIntegration,
  validateMappingList,
  type FieldInput,
  type IntegrationInput,
  type MappingInput,
} from './validate.js';

export const NO_MAPPINGS = 'every bulk import request would be accepted and then fail';

function refuseMisfits(mappings: readonly IntegrationMapping[], table: TargetTable, at: string): void {
  const misfits = mappings.filter((m) => !table.fields.some((f) => f.name === m.targetField));
  if (misfits.length === 0) return;
  const list = misfits.map((m) => `field ${m.fieldNo} → "${m.targetField}"`).join(', ');
  throw incompatibleAt(at, `table "${table.name}" has no field for mapping(s) ${list}; change or delete those mappings first`);
}

/** The rule of the module header: the integration as it will be stored. */
function refuseBulkWithoutMappings(integration: Integration, mappings: readonly IntegrationMapping[], at: string): void {
  if (!integration.acceptBulkImportRequests || mappings.length > 0) return;
  throw invalidAt(
    pathOf(at, 'acceptBulkImportRequests'),
    `integration ${integration.sortingOrder} has no mappings, so ${NO_MAPPINGS}; map at least one field (mappings) first, or leave acceptBulkImportRequests off`,
  );
}

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
export interface DeclarationPlan {
  readonly next: Integration;
  readonly current: IntegrationPlan | undefined;
  readonly fields: readonly IntegrationField[];
  readonly mappings: readonly IntegrationMapping[];
}

export async function planDeclaration(tx: Db, input: IntegrationDeclaration, at: string): Promise<DeclarationPlan> {
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

export async function writeDeclaration(tx: Db, plan: DeclarationPlan, clock: Clock): Promise<IntegrationDeclared> {
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
