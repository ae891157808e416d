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
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { WriteMode } from '../../integrations/model.js';
import type { SqlValue } from '../../mapping/convert.js';
import type { CompiledMapping } from '../../mapping/engine.js';
import { columnType, quoteIdent } from '../../tables/ddl.js';
import type { FieldType } from '../../tables/model.js';
import { targetSql, upsertClause, valueAliases } from '../target-sql.js';
import type { PgClient } from './client.js';

const STAGE = 'ifw_import_stage';

/** The PostgreSQL column type of a target field, as the target table declares it. */
const pgColumnType = (type: FieldType): string => columnType(type, 'postgres').toLowerCase();

/** Rows per piece written to the COPY stream: pieces of about 100 KB, one string each. */
const ROWS_PER_PIECE = 500;

// eslint-disable-next-line no-control-regex -- NUL is what cannot be staged: it is looked for.
const NEEDS_ESCAPE = /[\\\n\r\t\u0000]/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * One value in COPY's text format; undefined: it cannot be staged (a NUL character). Numbers are
 * written as `String(n)`, the text pg writes for an array parameter (shortest exact form of the double).
 */
function copyText(value: SqlValue): string | undefined {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  if (!NEEDS_ESCAPE.test(value)) return value;
  if (value.includes('\u0000')) return undefined;
  return value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!);
}

export interface StagedSql {
  readonly create: string;
  /** Writes the staged rows the parameter $1 (an int4 array of `n`) lists; `writeAll` every staged row. */
  readonly write: string;
  readonly writeAll: string;
  /** The staged key columns (as staged) of the rows whose key is in the target table; null without a key. */
  readonly existingKeys: string | null;
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
  };
}

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

/** The COPY text of a chunk's rows, in pieces; null when a value cannot be staged (a NUL character). */
export function copyPieces(rows: readonly (readonly SqlValue[])[]): string[] | null {
  const pieces: string[] = [];
  let piece = '';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    let line = String(i);
    for (let c = 0; c < row.length; c++) {
      const text = copyText(row[c]!);
      if (text === undefined) return null;
      line += '\t' + text;
    }
    piece += line + '\n';
    if ((i + 1) % ROWS_PER_PIECE === 0) {
      pieces.push(piece);
      piece = '';
    }
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}

/** The import's staging table: created on first use, emptied and filled per chunk, dropped at the end. */
export class Stage {
  private created = false;
  /** Rows are staged that no TRUNCATE has removed yet. */
  private full = false;

  constructor(
    private readonly client: PgClient,
    readonly sql: StagedSql,
  ) {}

  /** Replaces the staged rows with `pieces` (from copyPieces). */
  async load(pieces: readonly string[]): Promise<void> {
    if (!this.created) {
      await this.client.query(this.sql.create);
      this.created = true;
    } else if (this.full) {
      await this.client.query(`TRUNCATE ${STAGE}`);
    }
    this.full = true;
    await pipeline(Readable.from(pieces), this.client.query(copyFrom(`COPY ${STAGE} FROM STDIN`)));
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
