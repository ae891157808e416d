/**
 * The outbox: the events of a request or run that ends are written in the transaction that ends it,
 * one row per enabled webhook of its integration (and, for a run, of its endpoint). Delivery happens
 * later, on the job queue's `webhooks` lane (deliver.ts): processing never waits for a receiver.
 *
 * The row is small (who, what, when); the event's body is frozen at its first attempt from the ended
 * request or run, whose fields no longer change. Its id, `<subject id>.<webhook id>`, is the same on every
 * attempt and redelivery: the receiver's key for de-duplication.
 *
 * With no webhook configured the insert finds no row to write: one indexed lookup per ending.
 */
import { sql, type RawBuilder } from 'kysely';
import { execute, runFenced, select, type Connection, type PostgresConnection, type SqliteConnection } from '../storage/connection.js';
import type { Db } from '../storage/db.js';
import { eventTypeOf, type EndStatus } from './model.js';

export type EventSubject = 'request' | 'run';

/** A request or run that ends, as its status write says. */
export interface Ending {
  readonly subject: EventSubject;
  readonly id: string;
  readonly status: EndStatus;
  readonly now: Date;
}

const SOURCES = {
  request: (ids: RawBuilder<unknown>) =>
    sql`(select request_id as subject_id, integration_sorting_order, cast(null as text) as endpoint_code
           from ifw_bulk_import_request where request_id in (${ids}))`,
  run: (ids: RawBuilder<unknown>) =>
    sql`(select run_id as subject_id, integration_sorting_order, endpoint_code from ifw_import_run where run_id in (${ids}))`,
};

/** The outbox rows of the subjects `source` lists (subject_id, integration_sorting_order, endpoint_code). */
function eventsInsert(subject: EventSubject, status: EndStatus, now: Date, source: RawBuilder<unknown>): RawBuilder<unknown> {
  const at = now.toISOString();
  return sql`
    insert into ifw_webhook_delivery
           (delivery_id, webhook_id, event_type, subject_kind, subject_id, payload, status, attempts, next_attempt_at, last_error, created_at)
    select s.subject_id || '.' || w.webhook_id, w.webhook_id, ${eventTypeOf(subject, status)}, ${subject}, s.subject_id, '', 'Pending', 0, ${at}, '', ${at}
      from ${source} s
      join ifw_webhook w
        on w.enabled = 1
       and (w.integration_sorting_order = s.integration_sorting_order or w.endpoint_code = s.endpoint_code)`;
}

const RETURNING = {
  request: sql`returning request_id as subject_id, integration_sorting_order, cast(null as text) as endpoint_code`,
  run: sql`returning run_id as subject_id, integration_sorting_order, endpoint_code`,
};

/**
 * A fenced status write that ends a request or run (it changes one row or none) and its events, in one
 * transaction: on SQLite inside the caller's (synchronous) transaction, or one of their own; on
 * PostgreSQL one statement (the events insert reads the updated row), so that it is atomic whether the
 * connection is inside the caller's transaction or committing on its own.
 */
export function endWithEvents(conn: SqliteConnection, statusWrite: RawBuilder<unknown>, ending: Ending): boolean;
export function endWithEvents(conn: PostgresConnection, statusWrite: RawBuilder<unknown>, ending: Ending): Promise<boolean>;
export function endWithEvents(conn: Connection, statusWrite: RawBuilder<unknown>, ending: Ending): boolean | Promise<boolean>;
export function endWithEvents(conn: Connection, statusWrite: RawBuilder<unknown>, ending: Ending): boolean | Promise<boolean> {
  const { subject, id, status, now } = ending;
  if (conn.dialect === 'sqlite') {
    const run = (): boolean => {
      if (!runFenced(conn, statusWrite)) return false;
      execute(conn, eventsInsert(subject, status, now, SOURCES[subject](sql`${id}`)));
      return true;
    };
    return conn.sqlite.inTransaction ? run() : conn.sqlite.transaction(run).immediate();
  }
  const statement = sql<{ n: string | number }>`
    with ended as (${statusWrite} ${RETURNING[subject]}),
         events as (${eventsInsert(subject, status, now, sql`ended`)} returning 1)
    select count(*) as n from ended`;
  return select(conn, statement).then((rows) => Number(rows[0]?.n ?? 0) === 1);
}

/** The events of subjects that ended by a Kysely statement, on the same transaction `tx` (cancel, reap). */
export async function enqueueEvents(tx: Db, subject: EventSubject, status: EndStatus, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  const list = sql.join(ids.map((id) => sql`${id}`));
  await eventsInsert(subject, status, now, SOURCES[subject](list)).execute(tx);
}
