import type { Clock } from '../../src/core/clock.js';

/**
 * Real time plus an offset that a test moves forward: a wait the code measures on this clock (a
 * sign-in throttle's Retry-After, a lease) passes at once with `advance`, while everything else the
 * clock times still sees time go by as usual. For a service that must keep running (workers, sockets);
 * where nothing else runs, `manualClock` from src/core/clock.ts stops time altogether.
 */
export function movableClock(): Clock & { advance(ms: number): void } {
  let offsetMs = 0;
  const clock = (() => new Date(Date.now() + offsetMs)) as Clock & { advance(ms: number): void };
  clock.advance = (ms: number) => {
    offsetMs += ms;
  };
  return clock;
}
