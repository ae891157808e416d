/**
 * The job queue entries of bulk import: the Bulk Import Processor (`VENDOR IF Bulk Import
 * Processor`, drains Pending requests) and the retention cleanup. Both entries are seeded by migration
 * 001; the composition root lists the kinds (src/main/jobs.ts).
 */
import type { Config } from '../core/config.js';
import type { JobContext, JobKind } from '../job-queue/jobs.js';
import { processPendingRequests, type ImportFn, type ImportFnPg } from './processor.js';
import { releaseRequests } from './release-requests.js';
import { runRetentionCleanup } from './retention.js';

/** Ids of the entries migration 001 seeds. */
export const BULK_IMPORT_PROCESSOR_ENTRY = 'bulk-import-processor';
export const RETENTION_CLEANUP_ENTRY = 'retention-cleanup';

/** Bulk import work runs in its own lane: a REST import fetching pages for minutes never delays it. */
const LANE = 'bulk';

export interface BulkImportProcessorOptions {
  /** The importers; tests may substitute them. */
  readonly importPayload?: ImportFn | undefined;
  readonly importPayloadPg?: ImportFnPg | undefined;
}

export function bulkImportProcessor(options: BulkImportProcessorOptions = {}): JobKind {
  const importers = {
    ...(options.importPayload === undefined ? {} : { importPayload: options.importPayload }),
    ...(options.importPayloadPg === undefined ? {} : { importPayloadPg: options.importPayloadPg }),
  };
  return {
    kind: 'bulkImportProcessor',
    lane: LANE,
    wakes: BULK_IMPORT_PROCESSOR_ENTRY,
    async run(ctx) {
      await processPendingRequests({ ...ctx, ...importers });
    },
    concurrent: {
      drain: (ctx) => processPendingRequests({ ...ctx, ...importers }),
      release: (db, owners) => releaseRequests(db, { owners }),
    },
  };
}

/** A further cleanup the retention entry runs after the requests' (import runs': import-runs/retention.ts). */
export type MoreRetention = (ctx: JobContext) => Promise<void>;

export function retentionCleanup(config: Pick<Config, 'retentionDays'>, more: readonly MoreRetention[] = []): JobKind {
  return {
    kind: 'retentionCleanup',
    lane: LANE,
    async run(ctx) {
      const { db, clock, logger } = ctx;
      const deleted = await runRetentionCleanup(db, { now: clock(), retentionDays: config.retentionDays });
      if (deleted > 0) logger.info({ deleted, retentionDays: config.retentionDays }, 'retention cleanup deleted ended requests');
      for (const cleanup of more) await cleanup(ctx);
    },
  };
}
