/**
 * Records at the root read from the payload's bytes straight into the values SQLite binds
 * (json-records.ts reads them), for a SQLite import on the mapping thread: the same flat values, and
 * the same violations, as mapBatch makes of the parsed records (mapped-batches.ts), without parsing them
 * into objects. The usual values are taken from their bytes, the others given to the field's converter
 * (copy-values.ts readValue).
 */
import type { SqlValue } from '../mapping/convert.js';
import type { CompiledMapping, FieldViolation } from '../mapping/engine.js';
import { BROKEN, columnRules, CopyOut, readValue, type ColumnRule } from './copy-values.js';
import { JsonRecordReader, type FoundValues, type RecordLines } from './json-records.js';
import type { MappedBatch } from './mapped-batches.js';

/** A batch's rows as flat values (as mapBatch makes them). */
class ValueLines implements RecordLines<MappedBatch> {
  private values: SqlValue[] = [];
  private readonly rules: ColumnRule[];
  /** Where a value taken as sent is checked (copy-values.ts readValue). */
  private readonly scratch = new CopyOut();

  constructor(mapping: CompiledMapping) {
    this.rules = columnRules(mapping);
  }

  line(buf: Buffer, { kinds, starts, ends, flags }: FoundValues): boolean {
    const { values, rules } = this;
    const lineStart = values.length;
    for (let c = 0; c < rules.length; c++) {
      const value = readValue(this.scratch, buf, rules[c]!, kinds[c]!, starts[c]!, ends[c]!, flags[c]!);
      if (value === BROKEN) {
        values.length = lineStart;
        return false;
      }
      values.push(value);
    }
    return true;
  }

  row(row: readonly SqlValue[]): boolean {
    for (const value of row) this.values.push(value);
    return true;
  }

  take(length: number, violations: Map<number, FieldViolation[]> | null): MappedBatch {
    const batch = { length, values: this.values, violations };
    this.values = [];
    return batch;
  }
}

/** Records at the root read from bytes into batches of the values SQLite binds. */
export class JsonValuesReader extends JsonRecordReader<MappedBatch> {
  constructor(mapping: CompiledMapping, batchSize: number) {
    super(mapping, batchSize, new ValueLines(mapping));
  }
}
