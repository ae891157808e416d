/**
 * A message channel between two threads that both run synchronous code: `receive` blocks the calling
 * thread (Atomics.wait) until the other end has sent something, instead of waiting for its event loop.
 * Messages travel over a MessagePort (structured clone, transfers), read with receiveMessageOnPort;
 * a shared counter per direction, bumped after each message, is what a receiver sleeps on.
 *
 * The shared memory also holds a few counters of the caller's own (`counter`), for flow control that
 * needs no message.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort, type TransferListItem } from 'node:worker_threads';

/** One end, as it is handed to the other thread (the port in the transfer list). */
export interface SyncChannelEnd {
  readonly port: MessagePort;
  readonly shared: SharedArrayBuffer;
  /** 0 or 1: which of the two message counters this end sleeps on. */
  readonly side: 0 | 1;
}

/** Atomics.waitAsync (ES2024; Node 20 has it, the ES2023 lib does not declare it). */
interface WaitAsync {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: Promise<string> | string };
}

/** Counters of the caller's own, after the two message counters. */
const OWN_COUNTERS = 4;

export class SyncPort {
  private readonly port: MessagePort;
  private readonly counters: Int32Array;
  private readonly side: 0 | 1;

  constructor(end: SyncChannelEnd) {
    this.port = end.port;
    this.counters = new Int32Array(end.shared);
    this.side = end.side;
  }

  send(message: unknown, transfer?: readonly TransferListItem[]): void {
    this.port.postMessage(message, transfer);
    const theirs = 1 - this.side;
    Atomics.add(this.counters, theirs, 1);
    Atomics.notify(this.counters, theirs);
  }

  /**
   * One look at the port: its next message, or what to wait on before looking again (the counter as it
   * was before the look: a message sent after it changes it, and the wait returns at once), or
   * undefined once `deadline` has passed.
   */
  private look(deadline: number): { readonly message: unknown } | { readonly seen: number; readonly left: number } | undefined {
    const seen = Atomics.load(this.counters, this.side);
    const got = receiveMessageOnPort(this.port);
    if (got !== undefined) return { message: got.message };
    const left = deadline - performance.now();
    return left <= 0 ? undefined : { seen, left };
  }

  /** The next message, or undefined when none came within `timeoutMs`. */
  receive(timeoutMs: number): unknown {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const look = this.look(deadline);
      if (look === undefined || 'message' in look) return look?.message;
      Atomics.wait(this.counters, this.side, look.seen, look.left);
    }
  }

  /**
   * The same, for a thread whose event loop must go on meanwhile (an asynchronous importer): the wait
   * is Atomics.waitAsync, so the thread's other work (its connection's I/O) runs while it waits. Also
   * undefined once `stopped()` says so after an `interrupt()`.
   */
  async receiveAsync(timeoutMs: number, stopped: () => boolean = () => false): Promise<unknown> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (stopped()) return undefined;
      const look = this.look(deadline);
      if (look === undefined || 'message' in look) return look?.message;
      const waiting = (Atomics as unknown as WaitAsync).waitAsync(this.counters, this.side, look.seen, look.left);
      if (waiting.async) await waiting.value;
    }
  }

  /** Wakes this end's own wait in receiveAsync (which then asks its `stopped`), as a message would. */
  interrupt(): void {
    Atomics.add(this.counters, this.side, 1);
    Atomics.notify(this.counters, this.side);
  }

  /** Own counter `n` (0 … 3): read, add to (waking whoever waits on it), or wait until it is not `value`. */
  counter(n: number): { get(): number; add(by: number): void; waitWhile(value: number, timeoutMs: number): void } {
    const at = 2 + n;
    const counters = this.counters;
    return {
      get: () => Atomics.load(counters, at),
      add(by) {
        Atomics.add(counters, at, by);
        Atomics.notify(counters, at);
      },
      waitWhile(value, timeoutMs) {
        Atomics.wait(counters, at, value, timeoutMs);
      },
    };
  }

  close(): void {
    this.port.close();
  }
}

/** A new channel: this thread's end, and the end to hand (with its port transferred) to the other thread. */
export function syncChannel(): { here: SyncPort; there: SyncChannelEnd } {
  const { port1, port2 } = new MessageChannel();
  const shared = new SharedArrayBuffer((2 + OWN_COUNTERS) * Int32Array.BYTES_PER_ELEMENT);
  return { here: new SyncPort({ port: port1, shared, side: 0 }), there: { port: port2, shared, side: 1 } };
}
