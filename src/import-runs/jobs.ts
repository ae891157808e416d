/**
 * The job queue entries of REST imports: the Import Run Processor (drains Queued runs; seeded by
 * migration 003) and one entry per scheduled endpoint (kind endpointImport, created and removed with
 * the endpoint's schedule, see rest-source/schedule.ts). The composition root lists the kinds.
 */
import type { Config } from '../core/config.js';
import { AppError } from '../core/errors.js';
import type { JobContext, JobKind } from '../job-queue/jobs.js';
import { ENDPOINT_IMPORT_KIND, type EndpointImportParameters } from '../rest-source/schedule.js';
import { queueEndpointRun } from './queue-endpoint-run.js';
import { runRunRetention } from './retention.js';
import { runQueuedImports } from './run-imports.js';
import type { ImportSources } from './sources.js';

export const IMPORT_RUN_PROCESSOR_ENTRY = 'import-run-processor';

/** Imports wait on remote APIs, sometimes for minutes: their own lane keeps bulk imports moving meanwhile. */
const LANE = 'imports';

const drain = (ctx: JobContext, sources: ImportSources) => runQueuedImports({ ...ctx, sources });

export function importRunProcessor(sources: ImportSources): JobKind {
  return {
    kind: 'importRunProcessor',
    lane: LANE,
    wakes: IMPORT_RUN_PROCESSOR_ENTRY,
    async run(ctx) {
      await drain(ctx, sources);
    },
  };
}

function endpointCodeOf(ctx: JobContext): string {
  const parameters: unknown = JSON.parse(ctx.entry.parameters);
  const code =
    typeof parameters === 'object' && parameters !== null ? (parameters as Partial<EndpointImportParameters>).endpointCode : undefined;
  if (typeof code !== 'string' || code === '') throw new Error(`job queue entry "${ctx.entry.id}" has no endpointCode in its parameters`);
  return code;
}

/** A scheduled endpoint's turn: queue its run unless one is still in progress, then drain the queued runs. */
export function endpointImport(sources: ImportSources): JobKind {
  return {
    kind: ENDPOINT_IMPORT_KIND,
    lane: LANE,
    async run(ctx) {
      const endpointCode = endpointCodeOf(ctx);
      try {
        const run = await queueEndpointRun(ctx.db, endpointCode, 'schedule', ctx.clock());
        ctx.logger.info({ endpointCode, runId: run.runId }, 'scheduled import run queued');
      } catch (err) {
        if (!(err instanceof AppError && err.status === 409)) throw err;
        ctx.logger.info({ endpointCode }, 'scheduled import run skipped: a run of this endpoint is still Queued or Running');
      }
      await drain(ctx, sources);
    },
  };
}

/** The import runs' part of the retention cleanup entry (bulk-import/jobs.ts runs it after the requests'). */
export const runRetention =
  (config: Pick<Config, 'runRetentionDays'>) =>
  async ({ db, clock, logger }: Pick<JobContext, 'db' | 'clock' | 'logger'>): Promise<void> => {
    const deleted = await runRunRetention(db, { now: clock(), retentionDays: config.runRetentionDays });
    if (deleted > 0) logger.info({ deleted, runRetentionDays: config.runRetentionDays }, 'retention cleanup deleted ended import runs');
  };
