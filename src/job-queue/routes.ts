/**
 * Job queue entries (the Bulk Import Processor, retention cleanup): list and read them, put them On
 * Hold or Ready, change their interval, run one now. In Process and Error are the scheduler's to set.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { getEntry, listEntries, type JobQueueEntry } from './entries.js';
import { holdEntry } from './hold-entry.js';
import { ENTRY_STATUSES, SETTABLE_ENTRY_STATUSES, type SettableEntryStatus } from './model.js';
import { readyEntry } from './ready-entry.js';
import { runEntryNow } from './run-entry-now.js';
import { setEntryRecurrence } from './set-entry-recurrence.js';
import type { Db } from '../storage/db.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, literalUnion, Integer } from '../http/schemas.js';

export interface JobQueueRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** The running job queue, told when an entry may have become due; absent when this process runs no workers. */
  readonly queue?: { wake(): void } | undefined;
}

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
/** What PATCH offers is what it accepts: In Process and Error are the scheduler's to set. */
const SettableStatusSchema = literalUnion(SETTABLE_ENTRY_STATUSES, {
  description: 'Ready or On Hold; In Process and Error are set by the job queue itself',
});

const jobQueueEntries = entitySet({
  name: 'jobQueueEntries',
  key: 'id',
  keyType: 'string',
  noun: 'job queue entry',
  item: Type.Object({
    id: Type.String(),
    description: Type.String(),
    kind: Type.String({ description: 'What the entry runs: bulkImportProcessor or retentionCleanup' }),
    status: literalUnion(ENTRY_STATUSES, {
      description: 'Ready, On Hold, In Process (running now) or Error (the last run failed; it runs again at its next time)',
    }),
    recurrenceSeconds: Integer({ description: 'Interval between runs, in seconds' }),
    nextRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null while the entry runs' }),
    lastRunAt: Timestamp,
    lastEndedAt: Timestamp,
    lastError: Type.String({ description: "Error of the last run; '' when it succeeded" }),
  }),
});

const PatchBody = Type.Object(
  {
    status: Type.Optional(SettableStatusSchema),
    recurrenceSeconds: Type.Optional(Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);

export function jobQueueRoutes(deps: JobQueueRouteDeps): RoutePlugin {
  const { db, clock } = deps;

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
  const entityResponses = { 200: jobQueueEntries.Entity, 404: ErrorSchema };
  const read = jobQueueEntries.config('read');
  const change = jobQueueEntries.config('jobQueue');

  return (app) => {
    app.get(
      jobQueueEntries.path,
      { config: read, schema: { summary: 'List job queue entries', tags, response: { 200: jobQueueEntries.List } } },
      async () => jobQueueEntries.list(await listEntries(db)),
    );

    app.get(
      jobQueueEntries.itemPath,
      { config: read, schema: { summary: 'Read a job queue entry', tags, params: KeyParams, response: entityResponses } },
      async (request) => jobQueueEntries.entity(await load(jobQueueEntries.key(request.params.key))),
    );

    app.patch(
      jobQueueEntries.itemPath,
      {
        config: change,
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
        const id = (await load(jobQueueEntries.key(request.params.key))).id;
        const { status, recurrenceSeconds } = request.body;
        if (recurrenceSeconds !== undefined) await setEntryRecurrence(db, { id, now: clock(), recurrenceSeconds });
        if (status !== undefined) await setStatus(id, status);
        return jobQueueEntries.entity(await load(id));
      },
    );

    app.post(
      jobQueueEntries.action('setReady'),
      { config: change, schema: { summary: 'Set an entry Ready', tags, params: KeyParams, response: entityResponses } },
      async (request) => {
        const id = (await load(jobQueueEntries.key(request.params.key))).id;
        await setStatus(id, 'Ready');
        return jobQueueEntries.entity(await load(id));
      },
    );

    app.post(
      jobQueueEntries.action('setOnHold'),
      {
        config: change,
        schema: {
          summary: 'Put an entry On Hold: nothing runs, requests stay Pending',
          tags,
          params: KeyParams,
          response: entityResponses,
        },
      },
      async (request) => {
        const id = (await load(jobQueueEntries.key(request.params.key))).id;
        await setStatus(id, 'On Hold');
        return jobQueueEntries.entity(await load(id));
      },
    );

    app.post(
      jobQueueEntries.action('runNow'),
      {
        config: change,
        schema: {
          summary: 'Make an entry due now (answers before it runs)',
          description:
            'Makes the entry due at once and wakes the job queue. The answer comes as soon as the run is due (nextRunAt is now), ' +
            'not after it ran, and says nothing of its outcome. To see the result, read the entry again (GET jobQueueEntries(<id>)): ' +
            'lastRunAt is when the run started, lastEndedAt when it ended, lastError is empty when it succeeded and the entry is Ready ' +
            '(Error when it failed). What a run did is in its own resources: bulkImportRequests for the Bulk Import Processor, ' +
            'importRuns for an endpoint schedule. An entry that is running when asked runs once more after it ends. ' +
            'Refused with 409 while the entry is On Hold.',
          tags,
          params: KeyParams,
          response: { ...entityResponses, 409: ErrorSchema },
        },
      },
      async (request) => {
        const id = (await load(jobQueueEntries.key(request.params.key))).id;
        if (!(await runEntryNow(db, { id, now: clock() }))) {
          throw conflict('invalidStatusTransition', `Job queue entry '${id}' is On Hold; set it Ready to run it.`);
        }
        deps.queue?.wake();
        return jobQueueEntries.entity(await load(id));
      },
    );
  };
}
