/**
 * Processing → Pending by a worker that must exit before its import finished (shutdown timed out):
 * its leases go back at once instead of after they expire, and the attempt does not count. Fenced by
 * the owners' tokens; the import still running under such a lease then finds it gone and commits nothing.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export async function releaseRequests(db: Db, { owners }: { readonly owners: readonly string[] }): Promise<string[]> {
  if (owners.length === 0) return [];
  const { rows } = await sql<{ request_id: string }>`
    update ifw_bulk_import_request
       set status = 'Pending',
           attempts = case when attempts > 0 then attempts - 1 else 0 end,
           started_at = null,
           lease_owner = null,
           lease_expires_at = null
     where status = 'Processing'
       and lease_owner in (${sql.join(owners)})
    returning request_id`.execute(db);
  return rows.map((r) => r.request_id);
}
