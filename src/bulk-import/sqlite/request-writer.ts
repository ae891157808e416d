/**
 * Persisting accepted submissions on SQLite through the writer thread (see writer-thread.ts). A
 * thread that dies fails its in-flight batches with 503 and is started again on the next batch.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { threadEntry } from '../../core/threads.js';
import type { RequestStore } from '../submit.js';
import type { WriterData, WriterMessage, WriterReply } from './writer-messages.js';

export interface RequestWriter extends RequestStore {
  close(): Promise<void>;
}

interface Pending {
  resolve(): void;
  reject(err: unknown): void;
}

export function createRequestWriter(file: string, logger: Logger): RequestWriter {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let worker: Promise<Worker> | undefined;
  let closing = false;

  function start(): Promise<Worker> {
    const { filename, eval: isCode } = threadEntry(import.meta.url, 'writer-thread');
    const w = new Worker(filename, { eval: isCode, workerData: { file, busyTimeoutMs: 30_000 } satisfies WriterData });
    return new Promise((resolve, reject) => {
      w.on('message', (reply: WriterReply) => {
        if (reply.type === 'ready') {
          resolve(w);
          return;
        }
        const waiting = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.type === 'done') waiting?.resolve();
        else
          waiting?.reject(
            new AppError(
              503,
              'serviceUnavailable',
              reply.busy ? 'The database is busy; try again shortly.' : `The request could not be stored: ${reply.message}`,
            ),
          );
      });
      w.on('error', (err) => logger.error({ err }, 'submission writer thread failed'));
      w.on('exit', (code) => {
        worker = undefined;
        for (const [id, waiting] of pending) {
          pending.delete(id);
          waiting.reject(new AppError(503, 'serviceUnavailable', 'The request could not be stored; try again.'));
        }
        if (!closing) logger.error({ code }, 'submission writer thread stopped; it is started again with the next submission');
        reject(new Error(`the submission writer thread exited with code ${code}`));
      });
    });
  }

  async function send(message: WriterMessage, transfer: ArrayBuffer[] = []): Promise<void> {
    if (closing) throw new AppError(503, 'serviceUnavailable', 'The service is shutting down.');
    worker ??= start();
    const w = await worker;
    await new Promise<void>((resolve, reject) => {
      pending.set(message.type === 'stop' ? 0 : message.id, { resolve, reject });
      w.postMessage(message, transfer);
    });
  }

  return {
    insert: (rows) => send({ type: 'insert', id: nextId++, rows }),
    // Not copied: a chunk in shared memory (chunk-buffers.ts) is read by the thread where it lies; any
    // other chunk's memory moves to the thread when the chunk is the whole of it.
    writeChunk: (requestId, seq, data) =>
      send(
        { type: 'chunk', id: nextId++, requestId, seq, data },
        data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer ? [data.buffer] : [],
      ),
    discardChunks: (requestId) => send({ type: 'discard', id: nextId++, requestId }),
    async close() {
      closing = true;
      const w = await worker?.catch(() => undefined);
      if (w === undefined) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ type: 'stop' } satisfies WriterMessage);
      await exited;
    },
  };
}
