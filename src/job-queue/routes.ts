/**
 * Job queue entries (the Bulk Import Processor, retention cleanup): list and read them, put them On
 * Hold or Ready, change their interval, run one now. In Process and Error are the scheduler's to set.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { getEntry, listEntries, type JobQueueEntry } from './entries.js';
import { holdEntry } from './hold-entry.js';
import { SETTABLE_ENTRY_STATUSES, type SettableEntryStatus } from './model.js';
import { readyEntry } from './ready-entry.js';
import { runEntryNow } from './run-entry-now.js';
import { setEntryRecurrence } from './set-entry-recurrence.js';
import type { Database } from '../storage/database.js';
import { API_BASE, parseStringKey, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';

export interface JobQueueRouteDeps {
  readonly db: Database;
  readonly clock: Clock;
  /** The running job queue, told when an entry may have become due; absent when this process runs no workers. */
  readonly queue?: { wake(): void } | undefined;
}

const SET = `${API_BASE}/jobQueueEntries`;
const CONTEXT = `${API_BASE}/$metadata#jobQueueEntries`;

const ErrorSchema = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const StatusSchema = Type.Union([Type.Literal('Ready'), Type.Literal('On Hold'), Type.Literal('In Process'), Type.Literal('Error')]);

const EntryProperties = {
  id: Type.String(),
  description: Type.String(),
  kind: Type.String({ description: 'What the entry runs: bulkImportProcessor or retentionCleanup' }),
  status: StatusSchema,
  recurrenceSeconds: Type.Integer({ description: 'Interval between runs, in seconds' }),
  nextRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null while the entry runs' }),
  lastRunAt: Timestamp,
  lastEndedAt: Timestamp,
  lastError: Type.String({ description: "Error of the last run; '' when it succeeded" }),
};
const EntitySchema = Type.Object({ '@odata.context': Type.String(), ...EntryProperties });
const ListSchema = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(EntryProperties)) });

const PatchBody = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    recurrenceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ key: Type.String() });

const entity = (entry: JobQueueEntry) => ({ '@odata.context': `${CONTEXT}/$entity`, ...entry });

function isSettable(status: string): status is SettableEntryStatus {
  return (SETTABLE_ENTRY_STATUSES as readonly string[]).includes(status);
}

export function jobQueueRoutes(deps: JobQueueRouteDeps): RoutePlugin {
  const { db, clock } = deps;

  const entryId = (raw: string): string => requireKey(parseStringKey(raw), 'job queue entry', raw);

  async function load(id: string): Promise<JobQueueEntry> {
    const entry = await getEntry(db, id);
    if (entry === undefined) throw notFound(`No job queue entry '${id}'.`);
    return entry;
  }

  async function setStatus(id: string, status: SettableEntryStatus): Promise<void> {
    switch (status) {
      case 'Ready':
        await readyEntry(db, { id, now: clock() });
        deps.queue?.wake();
        return;
      case 'On Hold':
        await holdEntry(db, { id, now: clock() });
        return;
      default: {
        const unknown: never = status;
        throw badRequest('invalidStatusTransition', `Unknown status ${String(unknown)}.`);
      }
    }
  }

  const tags = ['Job Queue'];
  const entityResponses = { 200: EntitySchema, 404: ErrorSchema };

  return (app) => {
    app.get(
      SET,
      { config: { permission: 'read' }, schema: { summary: 'List job queue entries', tags, response: { 200: ListSchema } } },
      async () => ({ '@odata.context': CONTEXT, value: await listEntries(db) }),
    );

    app.get(
      `${SET}/:key`,
      { config: { permission: 'read' }, schema: { summary: 'Read a job queue entry', tags, params: KeyParams, response: entityResponses } },
      async (request) => entity(await load(entryId(request.params.key))),
    );

    app.patch(
      `${SET}/:key`,
      {
        config: { permission: 'jobQueue' },
        schema: {
          summary: 'Put an entry On Hold or Ready, or change its interval',
          description:
            'A shorter interval brings the next run forward; setting Ready runs an entry whose time passed while it was on hold.',
          tags,
          params: KeyParams,
          body: PatchBody,
          response: { ...entityResponses, 400: ErrorSchema },
        },
      },
      async (request) => {
        const id = (await load(entryId(request.params.key))).id;
        const { status, recurrenceSeconds } = request.body;
        if (status !== undefined && !isSettable(status)) {
          throw badRequest(
            'invalidStatusTransition',
            `status can be set to ${SETTABLE_ENTRY_STATUSES.join(' or ')}; ${status} is set by the job queue itself.`,
          );
        }
        if (recurrenceSeconds !== undefined) await setEntryRecurrence(db, { id, now: clock(), recurrenceSeconds });
        if (status !== undefined) await setStatus(id, status);
        return entity(await load(id));
      },
    );

    app.post(
      `${SET}/:key/Microsoft.NAV.setReady`,
      { config: { permission: 'jobQueue' }, schema: { summary: 'Set an entry Ready', tags, params: KeyParams, response: entityResponses } },
      async (request) => {
        const id = (await load(entryId(request.params.key))).id;
        await setStatus(id, 'Ready');
        return entity(await load(id));
      },
    );

    app.post(
      `${SET}/:key/Microsoft.NAV.setOnHold`,
      {
        config: { permission: 'jobQueue' },
        schema: {
          summary: 'Put an entry On Hold: nothing runs, requests stay Pending',
          tags,
          params: KeyParams,
          response: entityResponses,
        },
      },
      async (request) => {
        const id = (await load(entryId(request.params.key))).id;
        await setStatus(id, 'On Hold');
        return entity(await load(id));
      },
    );

    app.post(
      `${SET}/:key/Microsoft.NAV.runNow`,
      {
        config: { permission: 'jobQueue' },
        schema: { summary: 'Run an entry now', tags, params: KeyParams, response: { ...entityResponses, 409: ErrorSchema } },
      },
      async (request) => {
        const id = (await load(entryId(request.params.key))).id;
        if (!(await runEntryNow(db, { id, now: clock() }))) {
          throw conflict('invalidStatusTransition', `Job queue entry '${id}' is On Hold; set it Ready to run it.`);
        }
        deps.queue?.wake();
        return entity(await load(id));
      },
    );
  };
}
