/**
 * When undici has put a request on the wire. The fetch loop sends the request for page n+1 before it
 * hands page n over, so that staging page n overlaps the server's work on page n+1. But undici writes
 * a request to a reused keep-alive socket only on a later turn of the event loop (it first lets the
 * idle socket show a close or stray bytes), so a page handed over at once would be staged before the
 * next request leaves, and the two would not overlap. Its `undici:client:sendHeaders` diagnostics
 * channel says when a request's headers are written; the loop waits for that (or for the request to
 * settle, whichever comes first) before it hands the page over.
 *
 * Only a scheduling hint: a request to the same origin from elsewhere in the process may end a wait
 * early, a request that fails before it is written ends it when it settles, and no wait lasts longer
 * than MAX_WAIT_MS (a connection that takes long to open must not hold back the page before it).
 * Either way the page is handed over, once, in order.
 */
import diagnostics from 'node:diagnostics_channel';

const SEND_HEADERS = 'undici:client:sendHeaders';

/** A request on a kept-alive socket is written within a turn or two of the event loop, well within this. */
export const MAX_WAIT_MS = 50;

export interface WriteWatch {
  /** Resolves once a request to `origin` has been written, or once `request` settles. Call it right after sending. */
  written(origin: string, request: Promise<unknown>): Promise<void>;
  /** Stops watching (a subscription is not free: subscribe once per fetch, not per page). */
  close(): void;
}

interface Waiter {
  readonly origin: string;
  readonly resolve: () => void;
}

export function watchWrites(): WriteWatch {
  let waiting: Waiter | undefined;
  /**
   * One timer for the whole fetch, restarted by each wait: a timer set and cleared per page costs the
   * timer list's bookkeeping every time (its list of 50 ms timers emptied and made anew). When it fires,
   * MAX_WAIT_MS have passed since the last wait began.
   */
  let timer: NodeJS.Timeout | undefined;
  /** Ends `which` wait, if it is still the current one (a request settling late must not end the next). */
  const release = (which: Waiter | undefined = waiting): void => {
    if (which === undefined || which !== waiting) return;
    waiting = undefined;
    which.resolve();
  };
  const onSend = (message: unknown): void => {
    if (waiting !== undefined && (message as { request?: { origin?: unknown } }).request?.origin === waiting.origin) release();
  };
  diagnostics.subscribe(SEND_HEADERS, onSend);
  return {
    written(origin, request) {
      release();
      return new Promise((resolve) => {
        const waiter: Waiter = { origin, resolve };
        waiting = waiter;
        if (timer === undefined) timer = setTimeout(() => release(), MAX_WAIT_MS);
        else timer.refresh();
        const settled = (): void => release(waiter);
        request.then(settled, settled);
      });
    },
    close() {
      release();
      clearTimeout(timer);
      diagnostics.unsubscribe(SEND_HEADERS, onSend);
    },
  };
}
