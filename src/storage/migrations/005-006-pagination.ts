/** Migrations 005 and 006: a REST API endpoint's Pagination section as one tagged union, then the kept settings of the other types and the records fetched. Released migrations are never edited (see ../migrations.ts). */
import { sql, type Kysely, type Migration } from 'kysely';

/** The Pagination section of a REST API endpoint as migration 002 stored it. */
interface FlatPaginationRow {
  code: string;
  pagination_type: string;
  next_link_path: string | null;
  page_param: string | null;
  offset_param: string | null;
  limit_param: string | null;
  page_size: number | null;
  max_pages: number;
  response_data_path: string;
  allow_cross_origin: number;
}

/**
 * The flat columns as the union. This is the migration's own copy of the mapping, so that later
 * changes to the service's types cannot change what it does. A name or Page Size the type needs but
 * the row lacks (no version of the service saved such a row) becomes '' or 0: the row stays readable
 * and editable, and a run of it fails at once saying which setting is missing.
 */
function paginationOfFlatRow(row: FlatPaginationRow): Record<string, unknown> {
  const common = { maxPages: row.max_pages, pageSize: row.page_size, responseDataPath: row.response_data_path };
  switch (row.pagination_type) {
    case 'none':
      return { type: 'none', ...common };
    case 'nextLink':
      return { type: 'nextLink', nextLinkPath: row.next_link_path ?? '', allowCrossOrigin: row.allow_cross_origin === 1, ...common };
    case 'pageNumber':
      return { type: 'pageNumber', pageParam: row.page_param ?? '', ...common, pageSize: row.page_size ?? 0 };
    case 'offsetLimit':
      return {
        type: 'offsetLimit',
        offsetParam: row.offset_param ?? '',
        limitParam: row.limit_param ?? '',
        ...common,
        pageSize: row.page_size ?? 0,
      };
    default:
      throw new Error(
        `REST API endpoint "${row.code}" has pagination_type "${row.pagination_type}", which no version of the service wrote; set it to none, nextLink, pageNumber or offsetLimit and migrate again`,
      );
  }
}

/** What the old columns' defaults meant together: no pagination, Max Pages 100, the root array. */
const NO_PAGINATION = JSON.stringify({ type: 'none', maxPages: 100, pageSize: null, responseDataPath: '' });

/**
 * An endpoint's Pagination section in one column, `pagination`: the tagged union it is validated into
 * (src/pagination/types.ts), as JSON, Response Data Path as configured (`$` kept). The flat columns it
 * replaces could hold states no pagination type allows (a Next Link endpoint without its path); the
 * union cannot.
 */
export const m005_rest_endpoint_pagination: Migration = {
  async up(db: Kysely<unknown>) {
    const convert = async (tx: Kysely<unknown>): Promise<void> => {
      // SQLite adds a NOT NULL column only with a default.
      await tx.schema
        .alterTable('ifw_rest_endpoint')
        .addColumn('pagination', 'text', (c) => c.notNull().defaultTo(NO_PAGINATION))
        .execute();
      const { rows } = await sql<FlatPaginationRow>`select code, pagination_type, next_link_path, page_param, offset_param,
        limit_param, page_size, max_pages, response_data_path, allow_cross_origin from ifw_rest_endpoint`.execute(tx);
      for (const row of rows) {
        const pagination = JSON.stringify(paginationOfFlatRow(row));
        await sql`update ifw_rest_endpoint set pagination = ${pagination} where code = ${row.code}`.execute(tx);
      }
      // One column per statement: SQLite's ALTER TABLE drops one at a time.
      for (const column of [
        'pagination_type',
        'next_link_path',
        'page_param',
        'offset_param',
        'limit_param',
        'page_size',
        'max_pages',
        'response_data_path',
        'allow_cross_origin',
      ]) {
        await tx.schema.alterTable('ifw_rest_endpoint').dropColumn(column).execute();
      }
    };
    // The migrator runs SQLite's migrations outside a transaction (PostgreSQL's inside one): without
    // this, a failure half-way would leave the new column beside the old ones, and the next start would
    // fail to add it again.
    if (db.isTransaction) await convert(db);
    else await db.transaction().execute(convert);
  },
};

/**
 * REST API endpoints keep the settings of the pagination types not in use (`pagination_kept`, JSON,
 * src/rest-source/stored-pagination.ts), so that switching the type and back restores them. A Response
 * Data Path left blank for None or Next Link was stored as '' and meant "not set": it becomes null,
 * which now says so ('' is the blank a user writes: the root array). An import run's figure of records
 * received is named for what it counts (`records_fetched`), on the run and on each page.
 */
export const m006_kept_pagination_and_records_fetched: Migration = {
  async up(db: Kysely<unknown>) {
    const change = async (tx: Kysely<unknown>): Promise<void> => {
      await tx.schema
        .alterTable('ifw_rest_endpoint')
        .addColumn('pagination_kept', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      const { rows } = await sql<{ code: string; pagination: string }>`select code, pagination from ifw_rest_endpoint`.execute(tx);
      for (const row of rows) {
        const pagination = JSON.parse(row.pagination) as { type: string; responseDataPath: string | null };
        if ((pagination.type === 'none' || pagination.type === 'nextLink') && pagination.responseDataPath === '') {
          const unset = JSON.stringify({ ...pagination, responseDataPath: null });
          await sql`update ifw_rest_endpoint set pagination = ${unset} where code = ${row.code}`.execute(tx);
        }
      }
      await tx.schema.alterTable('ifw_import_run').renameColumn('record_count', 'records_fetched').execute();
      await tx.schema.alterTable('ifw_import_run_page').renameColumn('record_count', 'records_fetched').execute();
    };
    // As in 005: SQLite's migrations run outside a transaction, and half of this must not stay behind.
    if (db.isTransaction) await change(db);
    else await db.transaction().execute(change);
  },
};
