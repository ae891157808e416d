/**
 * `ifw apply <file.yaml>`: declarative configuration of target tables, integrations (with their
 * fields and mappings) and job queue entries. The whole document is applied in one transaction, through
 * the same validation and service functions as the HTTP API, so a bad document changes nothing and its
 * error names the path in the document (`integrations[0].fields[2].sourcePath: …`). Applying the same
 * document twice reports everything unchanged the second time.
 *
 * What the document does not mention is left alone: tables and integrations are never deleted, and an
 * integration without a `fields` (or `mappings`) key keeps its fields (or mappings). A `fields` or
 * `mappings` list, even an empty one, replaces what the integration had.
 *
 * REST API connections and endpoints (`restApiConnections`, `restApiEndpoints`) are declared with the
 * same properties as the HTTP API takes. A connection's secrets (password, token, apiKey,
 * clientSecret) may be written in the file or, better, as a reference `${ENV:NAME}` to an environment
 * variable of the applying process (substituted in those four properties only); a secret the document
 * leaves out keeps its stored value, and an unchanged one reports the connection unchanged.
 */
import fs from 'node:fs/promises';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parseDocument } from 'yaml';
import type { Clock } from '../core/clock.js';
import { ConnectionSchema, EndpointSchema, type ConnectionInput } from '../rest-source/schemas.js';
import { SECRET_NAMES } from '../rest-source/settings.js';
import { declareConnection, declareEndpoint } from '../rest-source/service.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { AppError, invalidRequest } from '../core/errors.js';
import { IntegrationProperties, IntegrationSetsProperties } from '../integrations/validate.js';
import { declareIntegration } from '../integrations/service.js';
import { literalUnion, Integer } from '../http/schemas.js';
import { getEntry } from '../job-queue/entries.js';
import { holdEntry } from '../job-queue/hold-entry.js';
import { SETTABLE_ENTRY_STATUSES } from '../job-queue/model.js';
import { readyEntry } from '../job-queue/ready-entry.js';
import { setEntryRecurrence } from '../job-queue/set-entry-recurrence.js';
import type { Db } from '../storage/db.js';
import { invalidAt, pathOf, type ChangeResult } from '../core/validation.js';
import { withTransaction } from '../storage/transaction.js';
import { declareTargetTable } from '../tables/service.js';
import { TargetTableSchema, type TargetTableInput } from '../tables/validate.js';

const closed = { additionalProperties: false } as const;

const JobQueueEntrySchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Optional(literalUnion(SETTABLE_ENTRY_STATUSES)),
    recurrenceSeconds: Type.Optional(Integer()),
  },
  closed,
);

export const ConfigDocumentSchema = Type.Object(
  {
    targetTables: Type.Optional(Type.Array(TargetTableSchema)),
    integrations: Type.Optional(Type.Array(Type.Object({ ...IntegrationProperties, ...IntegrationSetsProperties }, closed))),
    restApiConnections: Type.Optional(Type.Array(ConnectionSchema)),
    restApiEndpoints: Type.Optional(Type.Array(EndpointSchema)),
    jobQueueEntries: Type.Optional(Type.Array(JobQueueEntrySchema)),
  },
  closed,
);
export type ConfigDocument = Static<typeof ConfigDocumentSchema>;

export interface ApplyOutcome {
  readonly result: ChangeResult;
  /** What changed, for a person to read; empty when created or unchanged. */
  readonly changes: readonly string[];
}

export interface ApplyReport {
  readonly targetTables: readonly (ApplyOutcome & { readonly name: string })[];
  readonly integrations: readonly (ApplyOutcome & { readonly sortingOrder: number; readonly name: string })[];
  readonly restApiConnections: readonly (ApplyOutcome & { readonly code: string })[];
  readonly restApiEndpoints: readonly (ApplyOutcome & { readonly code: string })[];
  readonly jobQueueEntries: readonly (ApplyOutcome & { readonly id: string })[];
  /** How many entities were created, updated and found unchanged. */
  readonly summary: Readonly<Record<ChangeResult, number>>;
}

export interface ApplyOptions {
  /** Seals the secrets of REST API connections; required when the document declares any. */
  readonly secrets?: SecretBox;
  /** Where `${ENV:NAME}` references in secrets are looked up; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

const RECURRENCE_LIMIT = 86_400;

export async function applyConfigFile(db: Db, file: string, clock: Clock, options: ApplyOptions = {}): Promise<ApplyReport> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    const reason = err instanceof Error && 'code' in err && err.code === 'ENOENT' ? 'no such file' : String(err);
    throw new AppError(400, 'invalidRequest', `Cannot read ${file}: ${reason}.`);
  }
  const parsed = parseDocument(text);
  const [syntax] = parsed.errors;
  if (syntax !== undefined) throw invalidRequest(`${file}: not valid YAML: ${syntax.message}`);
  try {
    return await applyConfig(db, parsed.toJS(), clock, options);
  } catch (err) {
    if (err instanceof AppError) throw new AppError(err.status, err.code, `${file}: ${err.message}`);
    throw err;
  }
}

export async function applyConfig(db: Db, doc: unknown, clock: Clock, options: ApplyOptions = {}): Promise<ApplyReport> {
  const config = checkShape(doc);
  const tables = config.targetTables ?? [];
  const integrations = config.integrations ?? [];
  const endpoints = config.restApiEndpoints ?? [];
  const entries = config.jobQueueEntries ?? [];
  refuseDuplicates(
    tables.map((t) => t.name),
    'targetTables',
    'name',
  );
  refuseDuplicates(
    integrations.map((i) => i.sortingOrder),
    'integrations',
    'sortingOrder',
  );
  refuseDuplicates(
    (config.restApiConnections ?? []).map((c) => c.code),
    'restApiConnections',
    'code',
  );
  refuseDuplicates(
    endpoints.map((e) => e.code),
    'restApiEndpoints',
    'code',
  );
  refuseDuplicates(
    entries.map((e) => e.id),
    'jobQueueEntries',
    'id',
  );
  const env = options.env ?? process.env;
  const connections = (config.restApiConnections ?? []).map((c, i) => withEnvSecrets(c, env, pathOf('restApiConnections', i)));
  const box = options.secrets;
  if (connections.length > 0 && box === undefined)
    throw new Error('applyConfig: declaring restApiConnections needs options.secrets (a SecretBox)');

  return withTransaction(db, async (tx) => {
    const tableReports: (ApplyOutcome & { name: string })[] = [];
    for (const i of relationOrder(tables)) {
      const declared = await declareTargetTable(tx, tables[i]!, clock, pathOf('targetTables', i));
      const added = declared.addedFields.map((f) => `field ${f} added`);
      const changes = declared.result !== 'updated' ? [] : added.length > 0 ? added : ['declaration updated'];
      tableReports[i] = { name: declared.table.name, result: declared.result, changes };
    }
    const integrationReports: (ApplyOutcome & { sortingOrder: number; name: string })[] = [];
    for (const [i, input] of integrations.entries()) {
      const declared = await declareIntegration(tx, input, clock, pathOf('integrations', i));
      integrationReports.push({
        sortingOrder: declared.integration.sortingOrder,
        name: declared.integration.name,
        result: declared.result,
        changes: declared.changes,
      });
    }
    const connectionReports: (ApplyOutcome & { code: string })[] = [];
    for (const [i, input] of connections.entries()) {
      const declared = await declareConnection(tx, input, clock, box!, pathOf('restApiConnections', i));
      connectionReports.push({ code: declared.value.code, result: declared.result, changes: declared.changes });
    }
    const endpointReports: (ApplyOutcome & { code: string })[] = [];
    for (const [i, input] of endpoints.entries()) {
      const declared = await declareEndpoint(tx, input, clock, pathOf('restApiEndpoints', i));
      endpointReports.push({ code: declared.value.code, result: declared.result, changes: declared.changes });
    }
    // Job queue entries last: a document may hold an endpoint's schedule entry (`endpoint:<code>`).
    const entryReports: (ApplyOutcome & { id: string })[] = [];
    for (const [i, input] of entries.entries()) entryReports.push(await applyJobQueueEntry(tx, input, clock, pathOf('jobQueueEntries', i)));

    const all = [...tableReports, ...integrationReports, ...connectionReports, ...endpointReports, ...entryReports];
    const count = (result: ChangeResult) => all.filter((e) => e.result === result).length;
    return {
      targetTables: tableReports,
      integrations: integrationReports,
      restApiConnections: connectionReports,
      restApiEndpoints: endpointReports,
      jobQueueEntries: entryReports,
      summary: { created: count('created'), updated: count('updated'), unchanged: count('unchanged') },
    };
  });
}

// ---- secrets from the environment ----------------------------------------------------------

const ENV_REFERENCE = /\$\{ENV:([^}]*)\}/g;

/** Replaces every `${ENV:NAME}` in `value` with that environment variable; an unset one is an error. */
export function substituteEnv(value: string, env: NodeJS.ProcessEnv, at: string): string {
  return value.replace(ENV_REFERENCE, (_match, name: string) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw invalidAt(at, `"\${ENV:${name}}" does not name an environment variable (letters, digits and "_")`);
    const resolved = env[name];
    if (resolved === undefined) throw invalidAt(at, `environment variable ${name} is not set`);
    return resolved;
  });
}

function withEnvSecrets(input: ConnectionInput, env: NodeJS.ProcessEnv, at: string): ConnectionInput {
  const resolved: ConnectionInput = { ...input };
  for (const name of SECRET_NAMES) {
    const value = input[name];
    if (typeof value === 'string') resolved[name] = substituteEnv(value, env, pathOf(at, name));
  }
  return resolved;
}

// ---- document shape ------------------------------------------------------------------------

/** `/integrations/0/fields/2` → `integrations[0].fields[2]`. */
function documentPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? pathOf(path, Number(segment)) : pathOf(path, segment)), '');
}

function checkShape(doc: unknown): ConfigDocument {
  if (doc === null || doc === undefined)
    throw invalidRequest('the document is empty; declare targetTables, integrations and/or jobQueueEntries');
  if (Value.Check(ConfigDocumentSchema, doc)) return doc;
  // Schema-level `false` entries repeat what `additionalProperties` says better.
  const errors = Value.Errors(ConfigDocumentSchema, doc).filter((e) => e.keyword !== 'boolean');
  const first = errors[0];
  if (first === undefined) throw invalidRequest('the document does not have the expected shape');
  const where = documentPath(first.instancePath);
  const params = first.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  switch (first.keyword) {
    case 'required':
      throw invalidAt(where, `${(params.requiredProperties ?? []).map((p) => `"${p}"`).join(', ')} is required`);
    case 'additionalProperties':
      throw invalidAt(where, `unknown property ${(params.additionalProperties ?? []).map((p) => `"${p}"`).join(', ')}`);
    case 'type': {
      // A union reports each alternative at the same place: say them together.
      const types = errors
        .filter((e) => e.keyword === 'type' && e.instancePath === first.instancePath)
        .map((e) => (e.params as { type: string }).type);
      throw invalidAt(where === '' ? 'the document' : where, `must be ${[...new Set(types)].join(' or ')}`);
    }
    case 'const': {
      const values = errors
        .filter((e) => e.keyword === 'const' && e.instancePath === first.instancePath)
        .map((e) => JSON.stringify((e.params as { allowedValue: unknown }).allowedValue));
      throw invalidAt(where, `must be one of ${values.join(', ')}`);
    }
    default:
      throw invalidAt(where === '' ? 'the document' : where, first.message);
  }
}

function refuseDuplicates(keys: readonly (string | number)[], list: string, property: string): void {
  keys.forEach((key, i) => {
    const first = keys.indexOf(key);
    if (first !== i)
      throw invalidAt(pathOf(pathOf(list, i), property), `${JSON.stringify(key)} is declared twice (also ${list}[${first}])`);
  });
}

/** Document indexes in an order where every table comes after the tables it relates to. */
function relationOrder(tables: readonly TargetTableInput[]): number[] {
  const index = new Map(tables.map((t, i) => [t.name, i]));
  const order: number[] = [];
  const state = new Map<number, 'visiting' | 'done'>();
  const visit = (i: number, path: string) => {
    if (state.get(i) === 'done') return;
    if (state.get(i) === 'visiting')
      throw invalidAt(path, `tables relating to each other in a cycle cannot be declared; relate them in one direction`);
    state.set(i, 'visiting');
    tables[i]!.fields.forEach((f, j) => {
      const target = f.relation === undefined ? undefined : index.get(f.relation.table);
      if (target !== undefined && target !== i) visit(target, pathOf(pathOf(pathOf(pathOf('targetTables', i), 'fields'), j), 'relation'));
    });
    state.set(i, 'done');
    order.push(i);
  };
  tables.forEach((_, i) => visit(i, pathOf('targetTables', i)));
  return order;
}

// ---- job queue entries ---------------------------------------------------------------------

async function applyJobQueueEntry(
  tx: Db,
  input: Static<typeof JobQueueEntrySchema>,
  clock: Clock,
  at: string,
): Promise<ApplyOutcome & { id: string }> {
  const entry = await getEntry(tx, input.id);
  if (entry === undefined)
    throw invalidAt(
      pathOf(at, 'id'),
      `no job queue entry "${input.id}"; the entries are seeded by the service (e.g. "bulk-import-processor")`,
    );
  const { recurrenceSeconds, status } = input;
  if (recurrenceSeconds !== undefined && (recurrenceSeconds < 1 || recurrenceSeconds > RECURRENCE_LIMIT)) {
    throw invalidAt(pathOf(at, 'recurrenceSeconds'), `must be between 1 and ${RECURRENCE_LIMIT}, got ${recurrenceSeconds}`);
  }
  const changes: string[] = [];
  const now = clock();
  if (recurrenceSeconds !== undefined && recurrenceSeconds !== entry.recurrenceSeconds) {
    await setEntryRecurrence(tx, { id: entry.id, now, recurrenceSeconds });
    changes.push(`recurrenceSeconds ${entry.recurrenceSeconds} → ${recurrenceSeconds}`);
  }
  // An entry In Process is active: as far as the document is concerned, it is Ready.
  const effective = entry.status === 'In Process' ? 'Ready' : entry.status;
  if (status !== undefined && status !== effective) {
    if (status === 'Ready') await readyEntry(tx, { id: entry.id, now });
    else await holdEntry(tx, { id: entry.id, now });
    changes.push(`status ${entry.status} → ${status}`);
  }
  return { id: entry.id, result: changes.length > 0 ? 'updated' : 'unchanged', changes };
}
