/** What an import is given and what it reports. */
import type { IntegrationPlan } from '../integrations/model.js';
import type { RecordError } from '../mapping/messages.js';
import type { TargetTable } from '../tables/model.js';

export type { RecordError } from '../mapping/messages.js';

export interface ImportInput {
  readonly plan: IntegrationPlan;
  /** The target table and its related tables (from getTableWithRelations()). */
  readonly tables: ReadonlyMap<string, TargetTable>;
  /** The JSON text. */
  readonly payload: string;
}

export interface ImportOutcome {
  /** True: data committed (possibly with skipped records). */
  readonly ok: boolean;
  /** Records written: inserted + updated. */
  readonly recordCount: number;
  readonly inserted: number;
  readonly updated: number;
  /** Records left out because of an error (skip mode only; a failed import writes and skips nothing). */
  readonly skipped: number;
  /** The first MAX_KEPT_ERRORS errors, in record order. */
  readonly errors: readonly RecordError[];
  /** All errors, including those not kept. */
  readonly errorCount: number;
  /** '' when there is no error. */
  readonly errorMessage: string;
}

export const MAX_KEPT_ERRORS = 1000;
