/**
 * One chunk of records (a few thousand) on PostgreSQL, judged exactly as the SQLite importer judges
 * records one statement at a time, but written with a few statements:
 *
 * 1. Map every record, and stream the mapped rows into the import's staging table with COPY
 *    (staging.ts). Relation values not already known to exist are noted, not asked one by one.
 * 2. Ask the database once per relation, and once for the chunk's primary keys, each a set-based
 *    query over the staged rows. Insert mode skips the key question until the database refuses the
 *    chunk: a bulk load into new keys, the usual case, then costs no lookup.
 * 3. Judge the records in order, in memory: a relation holds if its key was found or was written by an
 *    earlier record of this chunk; a key is taken if it was found or was written earlier. That gives
 *    each record's verdict (errors, `already exists`, `does not exist`, inserted, updated) in order.
 * 4. Apply the accepted staged rows to the target with one statement per segment (insert; update by
 *    primary key; upsert with ON CONFLICT … DO UPDATE), under a savepoint: the usual chunk is one
 *    segment and one statement. A segment ends where a key repeats (update and upsert), because one
 *    statement must not touch a row twice; rows of a segment go in one statement, so a row may refer to
 *    a row inserted in the same statement (foreign keys are checked at the end of the statement).
 *
 * A chunk holding a NUL character (which PostgreSQL text cannot hold, so neither can COPY) is not
 * staged: steps 2 and 4 then pass the rows as one array parameter per column, read through `unnest`
 * (sql.ts, lookups.ts), and that value is refused by the write, as any other value the database refuses.
 *
 * The database may still refuse a row the declaration allowed (a CHECK constraint added by hand, a NUL
 * character in a text, a row inserted or deleted meanwhile by another transaction). A set-based
 * statement does not say which row it refused, so then the chunk is rolled back to its savepoint and
 * written again one record at a time, each under its own savepoint, judging every record against what
 * was really written: the same outcome as SQLite's, record by record, at the price of three round trips
 * per record for that chunk only. Either way a refused statement never leaves the caller's transaction
 * aborted.
 */
import type { WriteMode } from '../../integrations/model.js';
import type { SqlValue } from '../../mapping/convert.js';
import { mapRecord, type CompiledMapping, type FieldViolation, type RelationExists } from '../../mapping/engine.js';
import type { MappedBatch } from '../mapped-batches.js';
import { keyErrorFactory, Tally } from '../tally.js';
import { isRecordLevelPgError, pgRefusal, release, rollbackAndRelease, savepoint, type PgClient } from './client.js';
import { existingKeys, existingStagedKeys, KEY_SEPARATOR, keyText, relationLookups, type RelationLookup } from './lookups.js';
import { buildImportSql } from './sql.js';
import { copyIn, numberedRows, type Stage } from './staging.js';
import { copyFlat, copyRows, copyString, mapsToNumber, readCopyRows, type CopyText } from '../copy-text.js';

type Written = 'inserted' | 'updated';
type Verdict = readonly FieldViolation[] | 'keyExists' | 'keyMissing' | Written;

/** A chunk's records mapped (and written as COPY text), ready to be written. */
export interface MappedChunk {
  readonly records: readonly unknown[];
  readonly firstRecordNo: number;
  readonly length: number;
  /** The mapped rows, and each record's violations (made on first use for records mapped on the mapping thread). */
  readonly rows: () => SqlValue[][];
  readonly violations: () => (FieldViolation[] | null)[];
  /** No record has violations. */
  readonly clean: boolean;
  /** 1: a relation value of the record was unknown while mapping; it is judged again in step 3. */
  readonly asked: Uint8Array;
  /** The rows as COPY text (staging.ts copyRows), in pieces (a batch's each) that are sent one by one; null: not staged. */
  readonly text: readonly CopyText[] | null;
}

/**
 * `map` maps a chunk; `write` writes a mapped one, adding its counts and errors to `tally`, and calls
 * `meanwhile` once while the database applies the chunk (so that the next chunk is mapped then: the two
 * overlap, on two cores), or at the end when there is nothing to apply. `meanwhile` must not use the
 * client: it is busy.
 */
export interface ChunkWriter {
  readonly map: (records: readonly unknown[], firstRecordNo: number) => MappedChunk;
  /** The same for records mapped on the mapping thread (mapped-batches.ts): no relation, nothing asked. */
  readonly mapped: (batches: readonly MappedBatch[], firstRecordNo: number) => MappedChunk;
  readonly write: (chunk: MappedChunk, tally: Tally, meanwhile: () => void) => Promise<void>;
}

/** Segments of a chunk written from the staging table at most; beyond, from array parameters. */
const MAX_STAGED_SEGMENTS = 8;

/** An update matched fewer rows than judged: a key was deleted meanwhile. Handled like a refused row. */
class RowCountMismatch extends Error {}

/** `stage`: the import's staging table (null: every chunk is written through `unnest`). */
export function chunkWriter(client: PgClient, mapping: CompiledMapping, mode: WriteMode, stage: Stage | null): ChunkWriter {
  const width = mapping.columns.length;
  const { keyColumns, table } = mapping;
  const sql = buildImportSql(mapping, mode);
  const lookups = relationLookups(mapping);
  const distinctLookups = [...new Set(lookups.filter((l): l is RelationLookup => l !== undefined))];
  const keyName = keyColumns.length === 1 ? mapping.columns[keyColumns[0]!]!.field.name : null;
  // A relation to this table's own key (a parent record): rows written earlier in the chunk count.
  const selfRelated = mapping.columns.map((c) => c.relation !== null && c.relation.table === table.name && c.relation.field === keyName);
  const keyError = keyErrorFactory(mapping);
  const keyOf = (row: readonly SqlValue[]): string =>
    keyColumns.length === 1 ? keyText(row[keyColumns[0]!]!) : keyColumns.map((k) => keyText(row[k]!)).join(KEY_SEPARATOR);
  const scratch = new Array<SqlValue>(width).fill(null);
  // Insert mode without relations: a chunk whose records all mapped cleanly has nothing to judge but
  // its keys, and the target's own key refuses a taken one. Its rows go straight into the target with
  // one COPY, under the chunk's savepoint; a refusal undoes it, and the chunk is staged and judged.
  // Upsert too while its keys are new (a first load: the COPY inserts what the upsert would); from its
  // first refused chunk on, an upsert is staged, so that an import of updates sends one chunk twice.
  let straight = stage !== null && distinctLookups.length === 0 && (mode === 'insert' || (mode === 'upsert' && keyColumns.length > 0));

  /** Verdicts other than a write become errors; returns whether the record is to be written. */
  const report = (tally: Tally, recordNo: number, verdict: Verdict, row: readonly SqlValue[]): verdict is Written => {
    if (verdict === 'inserted' || verdict === 'updated') return true;
    if (typeof verdict === 'string') tally.skip(keyError(recordNo, verdict, row));
    else tally.reject(recordNo, verdict);
    return false;
  };
  const count = (tally: Tally, verdict: Written): void => {
    if (verdict === 'inserted') tally.inserted++;
    else tally.updated++;
  };

  const map = (records: readonly unknown[], firstRecordNo: number): MappedChunk => {
    const n = records.length;
    const rows = new Array<SqlValue[]>(n);
    const violations = new Array<FieldViolation[] | null>(n);
    const asked = new Uint8Array(n);
    let current = 0;
    const provisional: RelationExists = (column, value) => {
      const lookup = lookups[column]!;
      if (!lookup.known(value)) {
        lookup.ask(value);
        asked[current] = 1;
      }
      return true;
    };
    for (let i = 0; i < n; i++) {
      current = i;
      const row = new Array<SqlValue>(width).fill(null);
      violations[i] = mapRecord(mapping, records[i], row, provisional);
      rows[i] = row;
    }
    const copied = stage === null ? null : copyRows(rows);
    const text = copied === null ? null : [copied];
    const clean = violations.every((v) => v === null);
    return { records, firstRecordNo, length: n, rows: () => rows, violations: () => violations, clean, asked, text };
  };

  const numeric = mapping.columns.map((c) => mapsToNumber(c.field.type));
  const mapped = (batches: readonly MappedBatch[], firstRecordNo: number): MappedChunk => {
    let length = 0;
    let text: CopyText[] | null = stage === null ? null : [];
    for (const batch of batches) {
      length += batch.length;
      if (text === null) continue;
      const more = batch.text ?? copyFlat(batch.values, width);
      if (more === null) text = null;
      else text.push(more);
    }
    let rows: SqlValue[][] | undefined;
    const violations = (): (FieldViolation[] | null)[] =>
      batches.flatMap((batch) => Array.from({ length: batch.length }, (_, r) => batch.violations?.get(r) ?? null));
    const made = (): SqlValue[][] =>
      (rows ??= batches.flatMap((batch) =>
        batch.text !== undefined
          ? readCopyRows(copyString(batch.text), numeric)
          : Array.from({ length: batch.length }, (_, r) => batch.values.slice(r * width, (r + 1) * width)),
      ));
    const clean = batches.every((batch) => batch.violations === null);
    return { records: [], firstRecordNo, length, rows: made, violations, clean, asked: new Uint8Array(length), text };
  };

  const write = async (chunk: MappedChunk, tally: Tally, meanwhile: () => void): Promise<void> => {
    const { records, firstRecordNo, asked, text } = chunk;
    const n = chunk.length;
    let waited = false;
    const wait = (): void => {
      if (waited) return;
      waited = true;
      meanwhile();
    };
    /** The chunk's rows straight into the target (see `straight`); false: refused, and undone. */
    const copyStraight = async (text: readonly CopyText[]): Promise<boolean> => {
      await savepoint(client, 'ifw_import_chunk');
      const copy = copyIn(client, stage!.sql.copyTarget, text);
      const copied = copy.done.then(
        () => null,
        (err: unknown) => ({ err }),
      );
      await copy.sent;
      wait();
      const failed = await copied;
      if (failed === null) {
        await release(client, 'ifw_import_chunk');
        return true;
      }
      if (!isRecordLevelPgError(failed.err)) throw failed.err;
      await rollbackAndRelease(client, 'ifw_import_chunk');
      if (mode === 'upsert') straight = false;
      return false;
    };
    const staged = text !== null;
    if (staged && straight && chunk.clean && (await copyStraight(text))) {
      tally.inserted += n;
      return;
    }
    const rows = chunk.rows();
    const violations = chunk.violations();
    if (staged) await stage!.load(numberedRows(text.map(copyString).join('')));
    for (const lookup of distinctLookups) await (staged ? lookup.resolveStaged(client) : lookup.resolve(client));
    // Records with errors already have them whatever the answers are; only the others are written.
    const candidates = rows.filter((_, i) => violations[i] === null);
    const askKeys = (): Promise<Set<string>> =>
      sql.existingKeys === null || candidates.length === 0
        ? Promise.resolve(new Set())
        : staged
          ? existingStagedKeys(client, stage!.sql.existingKeys!)
          : existingKeys(client, sql.existingKeys, keyColumns, candidates);
    // Insert mode first assumes that no key is taken (the usual bulk load into new keys) and asks only
    // when the database refuses the chunk; update needs the answer to count. A staged upsert does not
    // ask either: its statements say how many rows they inserted (the rest were updated), and the
    // judge's counts are set from that; it asks when the chunk is refused or has too many segments.
    const countsInserts = staged && stage!.sql.writeAllCounted !== null;
    const assumeNewKeys = mode === 'insert' || countsInserts;
    let existing = assumeNewKeys ? new Set<string>() : await askKeys();
    let keysKnown = !assumeNewKeys;
    /** Rows the statements of the last writeSegments inserted, when they counted them (an upsert before its keys are known). */
    let inserted: number | null = null;
    const insertedBy = (result: { rows: unknown[] }): void => {
      if (inserted !== null) inserted += (result.rows[0] as { inserted: number }).inserted;
    };

    const judge = (i: number, written: ReadonlySet<string>): Verdict => {
      const row = rows[i]!;
      let found: readonly FieldViolation[] | null = violations[i]!;
      if (asked[i] === 1) {
        const holds: RelationExists = (column, value) =>
          lookups[column]!.known(value) || (selfRelated[column]! && written.has(keyText(value)));
        // Mapped again only when a relation fails, so that its violation sits among the others in column order.
        if (!lookups.every((lookup, c) => lookup === undefined || row[c] === null || holds(c, row[c]!))) {
          found = mapRecord(mapping, records[i], scratch, holds);
        }
      }
      if (found !== null) return found;
      if (keyColumns.length === 0) return 'inserted';
      const key = keyOf(row);
      const taken = existing.has(key) || written.has(key);
      switch (mode) {
        case 'insert':
          return taken ? 'keyExists' : 'inserted';
        case 'update':
          return taken ? 'updated' : 'keyMissing';
        case 'upsert':
          return taken ? 'updated' : 'inserted';
        default: {
          const never: never = mode;
          throw new Error(`unknown write mode ${String(never)}`);
        }
      }
    };

    /** One array per column, for the given records. */
    const params = (indices: readonly number[]): SqlValue[][] => mapping.columns.map((_, c) => indices.map((i) => rows[i]![c]!));

    // Steps 3 and 4, the fast way: judge everything, then write the accepted rows in segments.
    const judgeAll = (): { judged: Tally; segments: number[][] } => {
      const judged = new Tally();
      const segments: number[][] = [];
      let segment: number[] = [];
      const segmentKeys = new Set<string>();
      const written = new Set<string>();
      for (let i = 0; i < n; i++) {
        const verdict = judge(i, written);
        if (!report(judged, firstRecordNo + i, verdict, rows[i]!)) continue;
        count(judged, verdict);
        if (keyColumns.length > 0) {
          const key = keyOf(rows[i]!);
          if (segmentKeys.has(key)) {
            segments.push(segment);
            segment = [];
            segmentKeys.clear();
          }
          segmentKeys.add(key);
          written.add(key);
        }
        segment.push(i);
      }
      if (segment.length > 0) segments.push(segment);
      return { judged, segments };
    };

    /**
     * The usual chunk: every staged row accepted, one segment: its savepoint, statement, and release
     * with the emptying of the staging table, while the next chunk is mapped.
     */
    const applyAllStaged = async (): Promise<boolean> => {
      const applying = (async (): Promise<{ refused: unknown } | null> => {
        await savepoint(client, 'ifw_import_chunk');
        try {
          insertedBy(await client.query(inserted === null ? stage!.sql.writeAll : stage!.sql.writeAllCounted!));
        } catch (err) {
          if (!isRecordLevelPgError(err)) throw err;
          return { refused: err };
        }
        await client.query(stage!.releaseAndEmpty('ifw_import_chunk'));
        return null;
      })();
      // Settled at once, so that a failure is not an unhandled rejection while the next chunk is mapped.
      const settled = applying.then(
        (refused) => ({ refused }),
        (err: unknown) => ({ err }),
      );
      wait();
      const answer = await settled;
      if ('err' in answer) throw answer.err;
      if (answer.refused === null) {
        stage!.emptied();
        return true;
      }
      await rollbackAndRelease(client, 'ifw_import_chunk');
      return false;
    };

    /** False: the database refused a row, and the chunk's writes were rolled back. */
    const writeSegments = async (segments: readonly number[][]): Promise<boolean> => {
      inserted = countsInserts && !keysKnown ? 0 : null;
      if (segments.length === 0) return true;
      // (Not in update mode: a row count short of the rows must still be undone under the savepoint.)
      if (staged && !sql.countsRows && segments.length === 1 && segments[0]!.length === n) return applyAllStaged();
      await savepoint(client, 'ifw_import_chunk');
      try {
        // Each staged segment's statement reads the whole staging table: many segments (a key repeated
        // often in one chunk) are written from array parameters instead, as an unstaged chunk is.
        const fromStage = staged && segments.length <= MAX_STAGED_SEGMENTS;
        for (const indices of segments) {
          const counting = inserted !== null;
          const result = !fromStage
            ? await client.query(sql.write, params(indices))
            : indices.length === n
              ? await client.query(counting ? stage!.sql.writeAllCounted! : stage!.sql.writeAll)
              : await client.query(counting ? stage!.sql.writeCounted! : stage!.sql.write, [indices]);
          insertedBy(result);
          if (sql.countsRows && result.rowCount !== indices.length) throw new RowCountMismatch();
        }
        await release(client, 'ifw_import_chunk');
        return true;
      } catch (err) {
        if (!(err instanceof RowCountMismatch) && !isRecordLevelPgError(err)) throw err;
      }
      await rollbackAndRelease(client, 'ifw_import_chunk');
      return false;
    };

    const learnKeys = async (): Promise<void> => {
      existing = await askKeys();
      keysKnown = true;
      fast = judgeAll();
    };
    let fast = judgeAll();
    // Segments beyond MAX_STAGED_SEGMENTS are written from array parameters, which do not count.
    if (countsInserts && fast.segments.length > MAX_STAGED_SEGMENTS) await learnKeys();
    let done = await writeSegments(fast.segments);
    if (!done && !keysKnown) {
      await learnKeys();
      done = await writeSegments(fast.segments);
    }
    if (done) {
      if (inserted !== null) {
        const { judged } = fast;
        const accepted = judged.inserted + judged.updated;
        judged.inserted = inserted;
        judged.updated = accepted - inserted;
      }
      tally.merge(fast.judged);
      wait();
      return;
    }

    // The slow way: record by record, each write under its own savepoint, judged against what was written.
    const exact = new Tally();
    const reallyWritten = new Set<string>();
    for (let i = 0; i < n; i++) {
      const recordNo = firstRecordNo + i;
      const row = rows[i]!;
      const verdict = judge(i, reallyWritten);
      if (!report(exact, recordNo, verdict, row)) continue;
      await savepoint(client, 'ifw_import_row');
      let rowCount: number | null;
      try {
        rowCount = (await client.query(sql.write, params([i]))).rowCount;
      } catch (err) {
        if (!isRecordLevelPgError(err)) throw err;
        await rollbackAndRelease(client, 'ifw_import_row');
        exact.refuse(recordNo, table.name, pgRefusal(err));
        continue;
      }
      await release(client, 'ifw_import_row');
      if (sql.countsRows && rowCount !== 1) {
        report(exact, recordNo, 'keyMissing', row);
        continue;
      }
      if (keyColumns.length > 0) reallyWritten.add(keyOf(row));
      count(exact, verdict);
    }
    tally.merge(exact);
    wait();
  };

  return { map, mapped, write };
}
