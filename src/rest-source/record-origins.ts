/**
 * Where a run's record came from. The import numbers a run's records 1, 2, … across its pages, as a
 * bulk import numbers a payload's; a person fixing the data also needs the page and the position on
 * it: `record 12 (page 3, record 2): field "name" is required`. Pages are staged in order, so the
 * record counts of the pages are enough to tell (one number per page, bounded by Max Pages).
 */
import { formatErrorMessage, formatSkippedMessage, type RecordError } from '../mapping/messages.js';
import type { ImportOutcome } from '../table-writer/model.js';

export interface RecordOrigin {
  readonly pageNo: number;
  /** 1-based position on the page. */
  readonly position: number;
}

export class RecordOrigins {
  private readonly pageNos: number[] = [];
  /** Records on the pages up to and including each page. */
  private readonly ends: number[] = [];

  /** A page as it was staged, in order. */
  add(pageNo: number, records: number): void {
    this.pageNos.push(pageNo);
    this.ends.push((this.ends.at(-1) ?? 0) + records);
  }

  /** The page and position of the run's record `recordNo` (1-based); undefined past the last one. */
  locate(recordNo: number): RecordOrigin | undefined {
    const { ends } = this;
    if (recordNo < 1 || recordNo > (ends.at(-1) ?? 0)) return undefined;
    let low = 0;
    let high = ends.length - 1;
    // The first page whose end reaches recordNo.
    while (low < high) {
      const mid = (low + high) >> 1;
      if (ends[mid]! >= recordNo) high = mid;
      else low = mid + 1;
    }
    return { pageNo: this.pageNos[low]!, position: recordNo - (low === 0 ? 0 : ends[low - 1]!) };
  }

  /** The error with its origin in the message: `record 12 (page 3, record 2): …`. */
  located(error: RecordError): RecordError {
    if (error.recordNo === null) return error;
    const origin = this.locate(error.recordNo);
    const prefix = `record ${error.recordNo}: `;
    if (origin === undefined || !error.message.startsWith(prefix)) return error;
    const message = `record ${error.recordNo} (page ${origin.pageNo}, record ${origin.position}): ${error.message.slice(prefix.length)}`;
    return { ...error, message };
  }

  /** The import's outcome with every record error located, and its errorMessage worded again from them. */
  locatedOutcome(outcome: ImportOutcome): ImportOutcome {
    if (outcome.errors.length === 0) return outcome;
    const errors = outcome.errors.map((e) => this.located(e));
    const errorMessage = outcome.ok
      ? formatSkippedMessage(outcome.skipped, errors, outcome.errorCount)
      : formatErrorMessage(errors, outcome.errorCount);
    return { ...outcome, errors, errorMessage };
  }
}
