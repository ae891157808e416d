/**
 * watchWrites: when the fetch loop may hand a page over. undici's sendHeaders diagnostics event for the
 * origin ends the wait; so does the request settling, or MAX_WAIT_MS. Events are published here by hand
 * (test/rest-source/fetch-pages.test.ts shows the order against a real server).
 */
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_WAIT_MS, watchWrites, type WriteWatch } from '../../src/rest-source/request-written.js';

const channel = diagnostics.channel('undici:client:sendHeaders');
const sent = (origin: string): void => channel.publish({ request: { origin, path: '/' }, headers: '', socket: null });

/** A promise that can be settled from outside, with whether it did. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `promise` has settled once pending callbacks ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('watchWrites', () => {
  let watch: WriteWatch;
  beforeEach(() => {
    watch = watchWrites();
  });
  afterEach(() => {
    watch.close();
    vi.useRealTimers();
  });

  it('ends the wait when a request to the origin is written, not one to another origin', async () => {
    const request = deferred();
    const written = watch.written('http://127.0.0.1:1', request.promise);
    sent('http://127.0.0.1:2');
    expect(await isSettled(written)).toBe(false);
    sent('http://127.0.0.1:1');
    expect(await isSettled(written)).toBe(true);
  });

  it('ends the wait when the request settles before it is written (it failed to connect)', async () => {
    const request = deferred();
    const written = watch.written('http://127.0.0.1:1', request.promise);
    expect(await isSettled(written)).toBe(false);
    request.resolve();
    expect(await isSettled(written)).toBe(true);
  });

  it('waits MAX_WAIT_MS at most', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const written = watch.written('http://127.0.0.1:1', deferred().promise);
    vi.advanceTimersByTime(MAX_WAIT_MS - 1);
    expect(await isSettled(written)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await isSettled(written)).toBe(true);
  });

  it('gives each wait its own MAX_WAIT_MS, not what is left of the one before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = watch.written('http://127.0.0.1:1', deferred().promise);
    sent('http://127.0.0.1:1');
    expect(await isSettled(first)).toBe(true);
    vi.advanceTimersByTime(MAX_WAIT_MS - 10);
    const second = watch.written('http://127.0.0.1:1', deferred().promise);
    vi.advanceTimersByTime(MAX_WAIT_MS - 1);
    expect(await isSettled(second)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await isSettled(second)).toBe(true);
  });

  it('an earlier request settling late does not end the next wait', async () => {
    const first = deferred();
    const firstWritten = watch.written('http://127.0.0.1:1', first.promise);
    sent('http://127.0.0.1:1');
    expect(await isSettled(firstWritten)).toBe(true);

    const second = watch.written('http://127.0.0.1:1', deferred().promise);
    first.resolve();
    expect(await isSettled(second)).toBe(false);
    sent('http://127.0.0.1:1');
    expect(await isSettled(second)).toBe(true);
  });

  it('stops listening when closed', async () => {
    watch.close();
    const written = watchWrites();
    const pending = written.written('http://127.0.0.1:1', deferred().promise);
    written.close();
    // Closing ends a wait still open, so a fetch that stops is never left hanging.
    expect(await isSettled(pending)).toBe(true);
  });
});
