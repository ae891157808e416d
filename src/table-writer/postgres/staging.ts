/**
 * The staging table of a PostgreSQL import: each chunk's mapped rows are streamed into it with
 * `COPY … FROM STDIN` (text format), then asked about and applied to the target table set-based, one
 * statement per question or write:
 *
 *   CREATE TEMP TABLE ifw_import_stage (n int4, c0 text, c1 text, …) ON COMMIT DROP   once per import
 *   TRUNCATE; COPY ifw_import_stage FROM STDIN                                         per chunk
 *   SELECT … FROM ifw_import_stage … LATERAL (related table)      which related keys exist (relations)
 *   SELECT … FROM ifw_import_stage … LATERAL (target table)       which keys exist (update, upsert)
 *   INSERT … SELECT / UPDATE … FROM / INSERT … ON CONFLICT … DO UPDATE     the rows the judge accepted
 *
 * `n` is the record's place in its chunk. Every column is text: COPY then cannot refuse a value (only
 * a NUL character, which PostgreSQL text cannot hold: such a chunk is not staged, see chunk.ts), and
 * the values are cast to the target's column types where they are read, as the array parameters of
 * the unnest statements are (sql.ts), so a value the target column cannot hold is refused by the apply
 * statement, under the chunk's savepoint. The staged text of a value is its key text (lookups.ts
 * keyText), so answers compare with what was asked without a cast back.
 *
 * The table is created inside the import's savepoint and truncated there, never inside a chunk's
 * savepoint: PostgreSQL then truncates it in place (a table created in the current subtransaction), and
 * its rows cost no WAL and no subtransaction. It is dropped at the end of the import (and with any
 * rollback to before it).
 */
import { from as copyFrom } from 'pg-copy-streams';
import type { WriteMode } from '../../integrations/model.js';
import type { CompiledMapping } from '../../mapping/engine.js';
import { columnType, quoteIdent } from '../../tables/ddl.js';
import type { FieldType } from '../../tables/model.js';
import { targetSql, upsertClause, valueAliases } from '../target-sql.js';
import type { PgClient } from './client.js';
import type { CopyText } from '../copy-text.js';

const STAGE = 'ifw_import_stage';

/** The PostgreSQL column type of a target field, as the target table declares it. */
const pgColumnType = (type: FieldType): string => columnType(type, 'postgres').toLowerCase();

export interface StagedSql {
  readonly create: string;
  /** Writes the staged rows the parameter $1 (an int4 array of `n`) lists; `writeAll` every staged row. */
  readonly write: string;
  readonly writeAll: string;
  /** The staged key columns (as staged) of the rows whose key is in the target table; null without a key. */
  readonly existingKeys: string | null;
  /** Upsert mode: `write` and `writeAll` answering how many rows they inserted (`inserted`), the rest updated; null otherwise. */
  readonly writeCounted: string | null;
  readonly writeAllCounted: string | null;
  /** Insert mode: the rows straight into the target table (copyRows' lines, unnumbered), when nothing needs judging first. */
  readonly copyTarget: string;
}

export function buildStagedSql(mapping: CompiledMapping, mode: WriteMode): StagedSql {
  const target = targetSql(mapping);
  const { table, names, keyNames, nonKeys } = target;
  const { keyColumns } = mapping;
  const aliases = valueAliases(names.length);
  const cast = (c: number): string => `s.${aliases[c]}::${pgColumnType(mapping.columns[c]!.field.type)}`;
  const listed = ' WHERE s.n = ANY($1::int4[])';

  const writeFor = (filter: string): string => {
    const insert = `${target.insertInto}SELECT ${names.map((_, c) => cast(c)).join(', ')} FROM ${STAGE} AS s${filter}`;
    switch (mode) {
      case 'insert':
        return insert;
      case 'upsert':
        return `${insert} ${upsertClause(target)}`;
      case 'update': {
        // As in sql.ts: with only key columns mapped, a no-op assignment still counts the row.
        const assigned = nonKeys.length > 0 ? nonKeys : [keyColumns[0]!];
        const match = keyColumns.map((k) => `t.${names[k]} = ${cast(k)}`).join(' AND ');
        return (
          `UPDATE ${table} AS t SET ${assigned.map((c) => `${names[c]} = ${cast(c)}`).join(', ')} FROM ${STAGE} AS s ` +
          `WHERE ${match}${filter.replace(' WHERE', ' AND')}`
        );
      }
      default: {
        const never: never = mode;
        throw new Error(`unknown write mode ${String(never)}`);
      }
    }
  };

  // LIMIT 1 forces one index probe per staged row (see sql.ts probeEach): a table the planner believes
  // small, such as the target being filled by this import, would otherwise be scanned whole per chunk.
  const existingKeys =
    keyColumns.length === 0
      ? null
      : `SELECT ${keyColumns.map((k) => `s.${aliases[k]}`).join(', ')} FROM ${STAGE} AS s CROSS JOIN LATERAL ` +
        `(SELECT 1 FROM ${table} AS t WHERE ${keyColumns.map((k, i) => `t.${keyNames[i]} = ${cast(k)}`).join(' AND ')} LIMIT 1) AS hit`;

  return {
    create: `CREATE TEMP TABLE ${STAGE} (n int4, ${aliases.map((a) => `${a} text`).join(', ')}) ON COMMIT DROP`,
    write: writeFor(listed),
    writeAll: writeFor(''),
    existingKeys,
    writeCounted: mode === 'upsert' ? counted(writeFor(listed)) : null,
    writeAllCounted: mode === 'upsert' ? counted(writeFor('')) : null,
    copyTarget: `COPY ${table} (${names.join(', ')}) FROM STDIN`,
  };
}

/**
 * An upsert that says how many rows it inserted: a row it inserted has no xmax, one it updated has
 * this transaction's (and a key left alone by DO NOTHING returns nothing).
 */
const counted = (upsert: string): string =>
  `WITH w AS (${upsert} RETURNING (xmax = 0) AS ins) SELECT (count(*) FILTER (WHERE ins))::int AS inserted FROM w`;

/**
 * Which staged values of `columns` (one related table's key: the columns relating to it) are keys
 * `field` of `table`; answered as staged.
 */
export function stagedRelationSql(columns: readonly number[], table: string, field: string, type: FieldType): string {
  const values = columns.map((c) => `SELECT c${c} AS v FROM ${STAGE} WHERE c${c} IS NOT NULL`).join(' UNION ');
  return (
    `SELECT u.v FROM (${values}) AS u CROSS JOIN LATERAL ` +
    `(SELECT 1 FROM ${quoteIdent(table)} AS t WHERE t.${quoteIdent(field)} = u.v::${pgColumnType(type)} LIMIT 1) AS hit`
  );
}

/** The same lines as the staging table takes them: each led by its place in the chunk (`n`). */
export function numberedRows(text: string): string {
  const lines = text.split('\n');
  lines.pop();
  let numbered = '';
  for (let i = 0; i < lines.length; i++) numbered += `${i}\t${lines[i]!}\n`;
  return numbered;
}

/**
 * Streams `text` (COPY text, whole or in pieces, each sent as it is) with `copy` (a `COPY … FROM
 * STDIN`): `sent` once the text is handed to the connection (or the COPY failed), `done` once the server
 * has taken every row.
 */
export function copyIn(client: PgClient, copy: string, text: CopyText | readonly CopyText[]): { sent: Promise<void>; done: Promise<void> } {
  const stream = client.query(copyFrom(copy));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
  });
  const pieces = typeof text === 'string' || text instanceof Uint8Array ? [text] : text;
  const written = new Promise<void>((resolve) => {
    if (pieces.length === 0) resolve();
    pieces.forEach((piece, i) => stream.write(piece, i === pieces.length - 1 ? () => resolve() : undefined));
  });
  stream.end();
  return { sent: Promise.race([written, done.then(noop, noop)]), done };
}

const noop = (): void => undefined;

/** The import's staging table: created on first use, emptied and filled per chunk, dropped at the end. */
export class Stage {
  private created = false;
  /** Rows are staged that no TRUNCATE has removed yet. */
  private full = false;

  constructor(
    private readonly client: PgClient,
    readonly sql: StagedSql,
  ) {}

  /** Replaces the staged rows with `text` (copyRows' lines, numbered by numberedRows). */
  async load(text: string): Promise<void> {
    if (!this.created) {
      await this.client.query(this.sql.create);
      this.created = true;
    } else if (this.full) {
      await this.client.query(`TRUNCATE ${STAGE}`);
    }
    this.full = true;
    await copyIn(this.client, `COPY ${STAGE} FROM STDIN`, text).done;
  }

  /** Releases `savepoint` and empties the table, in one query; call emptied() when it succeeded. */
  releaseAndEmpty(savepoint: string): string {
    return `RELEASE SAVEPOINT ${savepoint}; TRUNCATE ${STAGE}`;
  }

  emptied(): void {
    this.full = false;
  }

  async drop(): Promise<void> {
    if (this.created) await this.client.query(`DROP TABLE ${STAGE}`);
    this.created = false;
  }
}
