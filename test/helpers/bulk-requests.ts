/** Bulk Import Requests inserted straight into storage, and the answer of a bulk action, for the bulk action tests. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/storage/db.js';

export interface BulkAnswer {
  action: string;
  matched: number;
  processed: number;
  succeeded: number;
  refused: number;
  results: {
    requestId: string;
    outcome: string;
    status: string | null;
    newRequestId: string | null;
    error: { code: string; message: string } | null;
  }[];
  more: boolean;
  next: string | null;
}

export interface SeedRow {
  status: string;
  integration?: number;
  submittedBy?: string | null;
  submittedAt?: string;
  payload?: string;
}

/** `count` requests in `row`'s state, 500 rows a statement; their ids, sorted. */
export async function seedRequests(db: Db, count: number, row: SeedRow): Promise<string[]> {
  const ids: string[] = [];
  const ended = row.status !== 'Pending' && row.status !== 'Processing';
  const now = row.submittedAt ?? new Date().toISOString();
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, () => {
      const id = randomUUID();
      ids.push(id);
      return {
        request_id: id,
        integration_sorting_order: row.integration ?? 10,
        payload: row.payload ?? '[{"no":"C1","name":"One"}]',
        status: row.status,
        submitted_at: now,
        submitted_by: row.submittedBy ?? null,
        ended_at: ended ? now : null,
        processed_at: ended ? now : null,
        ...(row.status === 'Processing' ? { lease_owner: 'w1', lease_expires_at: now, started_at: now, attempts: 1 } : {}),
      };
    });
    await db.insertInto('ifw_bulk_import_request').values(rows).execute();
  }
  return ids.sort();
}
