/** What every drain of the job queue (bulk requests, import runs) works with. */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics.js';
import type { Database } from '../storage/database.js';

export interface WorkerContext {
  readonly db: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The lease token of this worker. */
  readonly owner: string;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** Asked before each further claim; false stops the drain (shutdown, entry put On Hold). */
  readonly keepGoing?: () => boolean | Promise<boolean>;
  /** This thread's metrics (counters only); absent in tests that do not count. */
  readonly metrics?: Metrics;
  /** Told what the drain claimed ("request 0190…"), for the workers list: an assignment, no I/O. */
  readonly onClaim?: (what: string) => void;
}
