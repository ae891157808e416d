/** Time is a parameter: production passes `systemClock`, tests pass a clock they move by hand. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function manualClock(start: Date | string): Clock & { advance(ms: number): void; set(d: Date | string): void } {
  let now = new Date(start).getTime();
  const clock = (() => new Date(now)) as Clock & { advance(ms: number): void; set(d: Date | string): void };
  clock.advance = (ms: number) => {
    now += ms;
  };
  clock.set = (d: Date | string) => {
    now = new Date(d).getTime();
  };
  return clock;
}

export const iso = (d: Date): string => d.toISOString();
