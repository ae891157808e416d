/**
 * The beat of a job queue worker: `work` runs when asked and on a timer, never two runs at once. Asked
 * while it runs, it runs once more right after (however often it was asked meanwhile), so a wake that
 * arrives during a run is not lost. The entry runner (runner.ts) and the concurrent drain loops
 * (postgres/drain-loops.ts) both beat this way.
 */
export interface Loop {
  /** Runs `work` now, or once more after the run under way; resolves when that run has ended. */
  tick(): Promise<void>;
  /** Runs `first` (a tick unless given), then ticks every `everyMs` after the previous timed tick. */
  start(first?: () => Promise<void>): void;
  /** True once stop() was called: the work in progress should end at its next chance. */
  readonly stopping: boolean;
  /** No further runs: stops the timer and waits for the run under way. */
  stop(): Promise<void>;
}

export function createLoop(work: () => Promise<void>, everyMs: number, onFailure: (err: unknown) => void): Loop {
  let stopping = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  function tick(): Promise<void> {
    if (stopping) return current ?? Promise.resolve();
    if (current === undefined) {
      current = work().finally(() => {
        current = undefined;
      });
      return current;
    }
    queued ??= current
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return stopping ? undefined : tick();
      });
    return queued;
  }

  function schedule(): void {
    if (stopping) return;
    timer = setTimeout(() => {
      timer = undefined;
      void tick().catch(onFailure).finally(schedule);
    }, everyMs);
  }

  return {
    tick,
    get stopping() {
      return stopping;
    },
    start(first = tick) {
      if (started || stopping) return;
      started = true;
      void first().catch(onFailure).finally(schedule);
    },
    async stop() {
      stopping = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await Promise.allSettled([current, queued]);
    },
  };
}
