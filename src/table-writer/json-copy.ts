/**
 * Records at the root read from the payload's bytes straight into COPY text bytes (json-records.ts
 * reads them), for a PostgreSQL import on the mapping thread: the COPY text, its copy to the importing
 * thread and its UTF-8 encoding there were the rest of an import's time. The usual values are written
 * as their own bytes (copy-values.ts writeValue):
 *
 * - a string without escapes, of ASCII characters, into a text, code or option field it fits as sent
 *   (not blank, not too long; a code in capitals without outer spaces; an option spelt as declared);
 * - a number written as JavaScript writes it back (no exponent, no trailing zero in its fraction, at
 *   most 15 digits, not `-0`) into an integer or decimal field (a fraction not into an integer);
 * - `true` and `false` into a boolean field (1 and 0), `null` and an absent value as `\N`;
 * - a date-time at offset zero, in its stored form.
 *
 * Any other value is made the value JSON.parse would make of it (exactNumber for a number, as
 * parseJsonExact does) and given to the field's own converter (mapping/convert.ts), whose answer is
 * written as copy-text.ts writes it. A batch is the same bytes the general path would send. A record
 * mapped whole whose line cannot be written (a NUL) makes the reader give up.
 */
import type { SqlValue } from '../mapping/convert.js';
import type { CompiledMapping, FieldViolation } from '../mapping/engine.js';
import { copyLine } from './copy-text.js';
import { columnRules, CopyOut, writeValue, type ColumnRule } from './copy-values.js';
import { JsonRecordReader, type FoundValues, type RecordLines } from './json-records.js';

/** A batch of records as COPY text bytes, and the violations of those that break a rule (their values are `\N`). */
export interface CopyBatch {
  readonly length: number;
  readonly text: Uint8Array;
  readonly violations: Map<number, FieldViolation[]> | null;
}

/** A batch's lines as COPY text bytes. */
class CopyLines implements RecordLines<CopyBatch> {
  private readonly out = new CopyOut();
  private readonly rules: ColumnRule[];

  constructor(mapping: CompiledMapping) {
    this.rules = columnRules(mapping);
  }

  line(buf: Buffer, { kinds, starts, ends, flags }: FoundValues): boolean {
    const { out, rules } = this;
    const lineStart = out.pos;
    for (let c = 0; c < rules.length; c++) {
      if (c > 0) out.byte(0x09);
      if (!writeValue(out, buf, rules[c]!, kinds[c]!, starts[c]!, ends[c]!, flags[c]!)) {
        out.pos = lineStart;
        return false;
      }
    }
    out.byte(0x0a);
    return true;
  }

  row(row: readonly SqlValue[]): boolean {
    const line = copyLine(row, 0, row.length);
    if (line === null) return false;
    this.out.text(line);
    return true;
  }

  take(length: number, violations: Map<number, FieldViolation[]> | null): CopyBatch {
    return { length, text: this.out.take(), violations };
  }
}

/** Records at the root read from bytes into batches of COPY text. */
export class JsonCopyReader extends JsonRecordReader<CopyBatch> {
  constructor(mapping: CompiledMapping, batchSize: number) {
    super(mapping, batchSize, new CopyLines(mapping));
  }
}
