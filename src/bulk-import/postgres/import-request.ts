/**
 * A request's import transaction on PostgreSQL: a pooled client of its own, the PostgreSQL importer and
 * the fenced finish inside one leased transaction (storage/postgres/leased-transaction.ts), the lease
 * renewed meanwhile on another connection.
 */
import { onClient } from '../../storage/connection.js';
import type { PostgresDatabase } from '../../storage/database.js';
import { inLeasedTransaction, LEASE_LOST } from '../../storage/postgres/leased-transaction.js';
import { importPayloadPg } from '../../table-writer/postgres/importer.js';
import { finishRequest } from '../finish-request.js';
import { heartbeatRequest, leaseHeld } from '../heartbeat-request.js';
import { postgresChunks } from '../payload-chunks.js';
import type { ImportFnPg, ImportJob, Imported } from '../import-job.js';

export interface PostgresImportOptions {
  readonly importer?: ImportFnPg | undefined;
  /** How often the lease is renewed while the request imports (default: a third of the lease). */
  readonly heartbeatMs?: number | undefined;
}

export async function importRequestOnPostgres(
  db: PostgresDatabase,
  job: ImportJob,
  options: PostgresImportOptions = {},
): Promise<Imported> {
  const { requestId, owner, leaseMs, time } = job;
  const importer = options.importer ?? importPayloadPg;
  const client = await db.pool.connect();
  let broken: Error | undefined;
  try {
    const renewal = {
      renew: () => heartbeatRequest(db, { requestId, owner, now: time(), leaseMs }),
      // A cancel or reset clears the lease: read back often, so the import stops at once.
      held: () => leaseHeld(db, requestId, owner),
      leaseMs,
      heartbeatMs: options.heartbeatMs,
      log: job.log,
    };
    const result = await inLeasedTransaction(
      db,
      client,
      renewal,
      (finishing, lost) =>
        importer(
          client,
          job.payloadChunks === 0
            ? { ...job.input, aborted: lost }
            : {
                ...job.input,
                aborted: lost,
                payload: { bytes: job.payloadLength ?? 0, chunks: postgresChunks(onClient(client), requestId, job.payloadChunks) },
              },
          async (outcome) => finishing() && (await finishRequest(onClient(client), { requestId, owner, now: time(), outcome })),
        ),
      (err) => (broken = err),
    );
    return result === LEASE_LOST ? { committed: false } : result;
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: pg closes it instead of pooling it.
    client.release(broken);
  }
}
