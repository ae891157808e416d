/**
 * What the lanes of this process run now, for the workers list (workers.ts): each runner and drain
 * loop says when it claims work and when it is idle again. Kept in memory and read by the heartbeat;
 * a lane that runs in a worker thread sends its snapshot to the thread that writes the heartbeat
 * (at most every SNAPSHOT_MS, only after a change), so a claim costs an assignment, not a message.
 */
import type { Clock } from '../core/clock.js';

export interface LaneActivity {
  readonly lane: string;
  /** What it runs now ("Bulk Import Processor: request 0190…"); null when idle. */
  readonly running: string | null;
  /** When it started what it runs now. */
  readonly since: string | null;
  /** When it last claimed work. */
  readonly lastClaimAt: string | null;
}

export interface Activity {
  /** `lane` claimed `what`. */
  claimed(lane: string, what: string): void;
  /** `lane` is idle again. */
  idle(lane: string): void;
  /** Every lane that said something, in the order they first did. */
  snapshot(): readonly LaneActivity[];
  /** True once something changed since the last snapshot. */
  readonly changed: boolean;
}

export function createActivity(clock: Clock, lanes: readonly string[] = []): Activity {
  const state = new Map<string, LaneActivity>(lanes.map((lane) => [lane, { lane, running: null, since: null, lastClaimAt: null }]));
  let changed = true;
  return {
    claimed(lane, what) {
      const now = clock().toISOString();
      state.set(lane, { lane, running: what, since: now, lastClaimAt: now });
      changed = true;
    },
    idle(lane) {
      const was = state.get(lane);
      if (was?.running === null) return;
      state.set(lane, { lane, running: null, since: null, lastClaimAt: was?.lastClaimAt ?? null });
      changed = true;
    },
    snapshot() {
      changed = false;
      return [...state.values()];
    },
    get changed() {
      return changed;
    },
  };
}

/** Lanes of several sources (a process's worker threads) in one list. */
export function mergeActivity(parts: readonly (readonly LaneActivity[])[]): LaneActivity[] {
  return parts.flat();
}
