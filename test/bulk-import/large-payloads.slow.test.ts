/**
 * Large payloads end to end over a real socket, on both databases: the body read as it arrives, the
 * payload stored in chunks and imported a record at a time; limits enforced as the bytes arrive; a
 * body cut off or refused leaves nothing behind.
 */
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { CHUNK_BYTES } from '../../src/bulk-import/upload.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';

const SET = `${API}/bulkImportRequests`;

interface Answer {
  readonly status: number;
  readonly body: { [key: string]: unknown };
}

/** Reads one HTTP response from the socket (Content-Length framed, as fastify answers). */
function readAnswer(socket: net.Socket): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const onData = (part: Buffer) => {
      data = Buffer.concat([data, part]);
      const headerEnd = data.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const head = data.subarray(0, headerEnd).toString('latin1');
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? '0');
      if (data.length < headerEnd + 4 + length) return;
      socket.off('data', onData);
      const body = data.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
      resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body) as Answer['body'] });
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

function write(socket: net.Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) {
      reject(new Error('socket closed'));
      return;
    }
    if (socket.write(data)) resolve();
    else socket.once('drain', resolve);
  });
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Posts a body in the given pieces over a fresh socket, chunked (no Content-Length), waiting a turn
 * between pieces; `stopAfter` pieces, when given, ends the socket there instead (the client leaves).
 */
async function post(
  port: number,
  authorization: string,
  pieces: Iterable<string | Buffer>,
  options: { stopAfter?: number; answerEarly?: boolean } = {},
): Promise<{ answer: Answer | undefined; sentAll: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const answered = readAnswer(socket);
  let answer: Answer | undefined;
  void answered.then((a) => (answer = a)).catch(() => undefined);
  await write(
    socket,
    `POST ${SET} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  let n = 0;
  let sentAll = true;
  for (const piece of pieces) {
    if (options.stopAfter !== undefined && n === options.stopAfter) {
      socket.destroy();
      return { answer: undefined, sentAll: false };
    }
    if (answer !== undefined && options.answerEarly === true) {
      sentAll = false;
      break;
    }
    const bytes = Buffer.from(piece);
    // A server that answered early may stop reading: then the write waits for nothing more.
    try {
      await Promise.race([
        write(socket, Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])),
        answered.catch(() => undefined),
      ]);
    } catch (err) {
      // The server closed the connection after answering.
      if (options.answerEarly !== true) throw err;
      sentAll = false;
      break;
    }
    n++;
    await turn();
  }
  if (sentAll) await write(socket, '0\r\n\r\n');
  const result = await answered;
  socket.destroy();
  return { answer: result, sentAll };
}

/** A text's UTF-8 bytes cut into pieces of `size` bytes (a character may be cut in two). */
function* pieces(text: string | Buffer, size: number): Generator<Buffer> {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Customers as examples/customers.yaml maps them, `count` of them, with names that need escaping. */
function customers(count: number, prefix: string): { no: string; name: string; address: { city: string } }[] {
  return Array.from({ length: count }, (_, i) => ({
    no: `${prefix}${i}`,
    name: `Customer "${i}" \\ 😀 é\n`,
    address: { city: 'Oslo' },
  }));
}

describe.each(BACKENDS)('large payloads on $name', (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let port: number;
  let authorization: string;

  beforeAll(async () => {
    fresh = await backend.fresh();
    t = await startTestService({ databaseUrl: fresh.url, workers: true, config: { schedulerTickMs: 50 } });
    await applyConfig(
      t.service.db,
      {
        integrations: [
          {
            sortingOrder: 50,
            name: 'Large customers, deep inside',
            type: 'file',
            targetTable: 'customer',
            recordsPath: 'export.data.customers',
            acceptBulkImportRequests: true,
            writeMode: 'upsert',
            fields: [
              { fieldNo: 1, title: 'No.', sourcePath: 'no' },
              { fieldNo: 2, title: 'Name', sourcePath: 'name' },
            ],
            mappings: [
              { fieldNo: 1, targetField: 'no', required: true },
              { fieldNo: 2, targetField: 'name', required: true },
            ],
          },
          {
            sortingOrder: 51,
            name: 'Large customers',
            type: 'file',
            targetTable: 'customer',
            recordsPath: '',
            acceptBulkImportRequests: true,
            writeMode: 'upsert',
            fields: [
              { fieldNo: 1, title: 'No.', sourcePath: 'no' },
              { fieldNo: 2, title: 'Name', sourcePath: 'name' },
            ],
            mappings: [
              { fieldNo: 1, targetField: 'no', required: true },
              { fieldNo: 2, targetField: 'name', required: true },
            ],
          },
        ],
      },
      systemClock,
    );
    const address = await t.service.listen();
    port = Number(new URL(address).port);
    authorization = t.headers.authorization;
  });
  afterAll(async () => {
    await t?.cleanup();
    await fresh?.cleanup();
  });

  const db = () => t.service.db.kysely;
  const chunkCount = async (requestId?: string) => {
    let query = db()
      .selectFrom('ifw_bulk_import_payload_chunk')
      .select((eb) => eb.fn.countAll<number>().as('n'));
    if (requestId !== undefined) query = query.where('request_id', '=', requestId);
    return Number((await query.executeTakeFirstOrThrow()).n);
  };
  /**
   * Chunks that belong to no request: those of a body still arriving, or of one refused or cut off
   * whose chunk writes were still in flight when its answer (or the disconnect) was seen; the service
   * removes those once the writes are done. Nothing is left behind when this comes back to 0.
   */
  const strayChunkCount = async () =>
    Number(
      (
        await db()
          .selectFrom('ifw_bulk_import_payload_chunk as c')
          .leftJoin('ifw_bulk_import_request as r', 'r.request_id', 'c.request_id')
          .where('r.request_id', 'is', null)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const noStrayChunks = (what: string) => until(async () => (await strayChunkCount()) === 0 || undefined, { what });
  const requestCount = async () =>
    Number(
      (
        await db()
          .selectFrom('ifw_bulk_import_request')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const ended = (requestId: string) =>
    until(
      async () => {
        const row = await db()
          .selectFrom('ifw_bulk_import_request')
          .select(['status', 'record_count', 'error_message', 'payload_chunks'])
          .where('request_id', '=', requestId)
          .executeTakeFirst();
        return row !== undefined && row.status !== 'Pending' && row.status !== 'Processing' ? row : undefined;
      },
      { what: `request ${requestId} ended`, timeoutMs: 60_000 },
    );
  const customerNames = async (prefix: string) =>
    (await sql<{ no: string; name: string }>`select no, name from customer where no like ${`${prefix}%`} order by no`.execute(db())).rows;

  it('takes a payload arriving slowly in small pieces, stores it in chunks and imports it', async () => {
    const records = customers(30_000, 'SLOW');
    const payload = JSON.stringify(records);
    expect(Buffer.byteLength(payload)).toBeGreaterThan(CHUNK_BYTES);
    const body = JSON.stringify({ integrationSortingOrder: 51, payload });
    // The first kilobytes a few bytes at a time, then 8 KB at a time.
    const bytes = Buffer.from(body);
    const slow = [...pieces(bytes.subarray(0, 3000), 3), ...pieces(bytes.subarray(3000), 8192)];
    const { answer } = await post(port, authorization, slow);
    expect(answer?.status).toBe(202);
    const requestId = answer!.body['requestId'] as string;
    expect(await chunkCount(requestId)).toBeGreaterThan(1);

    const row = await ended(requestId);
    expect(row).toMatchObject({ status: 'Completed', record_count: 30_000, error_message: '' });
    expect(Number(row.payload_chunks)).toBeGreaterThan(1);
    const names = await customerNames('SLOW');
    expect(names).toHaveLength(30_000);
    const byNo = new Map(names.map((r) => [r.no, r.name]));
    expect(byNo.get('SLOW29999')).toBe(records[29_999]!.name);

    const details = await t.inject({ url: `${SET}(${requestId})/details` });
    expect(details.json().payloadLength).toBe([...payload].length);
  });

  it('counts the characters of a payload that is mostly ASCII, cut anywhere', async () => {
    // Kilobytes of ASCII between characters of two to four bytes, sent in pieces of an odd size.
    const records = Array.from({ length: 40_000 }, (_, i) => ({
      no: `ASCII${i}`,
      name: i % 1_000 === 7 ? `Kund€ ${i} 😀 é` : `Customer ${i}`,
    }));
    const payload = JSON.stringify(records);
    expect(Buffer.byteLength(payload)).toBeGreaterThan(CHUNK_BYTES);
    const bytes = Buffer.from(JSON.stringify({ integrationSortingOrder: 51, payload }));
    const { answer } = await post(port, authorization, [...pieces(bytes, 4_093)]);
    expect(answer?.status).toBe(202);
    const requestId = answer!.body['requestId'] as string;
    expect(await ended(requestId)).toMatchObject({ status: 'Completed', record_count: 40_000 });
    const details = await t.inject({ url: `${SET}(${requestId})/details` });
    expect(details.json().payloadLength).toBe([...payload].length);
  });

  it('takes integrationSortingOrder after the payload', async () => {
    const payload = JSON.stringify(customers(9_000, 'AFTER'));
    const body = `{"payload":${JSON.stringify(payload)},"integrationSortingOrder":51}`;
    const { answer } = await post(port, authorization, pieces(body, 65_536));
    expect(answer?.status).toBe(202);
    const row = await ended(answer!.body['requestId'] as string);
    expect(row).toMatchObject({ status: 'Completed', record_count: 9_000 });
  });

  it('finds the records at a path deep inside a large document', async () => {
    const filler = Array.from({ length: 20_000 }, (_, i) => ({ id: i, note: 'not a record, but large' }));
    const document = {
      meta: { filler },
      export: { version: 2, data: { before: filler, customers: customers(5_000, 'DEEP'), after: filler } },
      trailer: filler,
    };
    const payload = JSON.stringify(document);
    expect(Buffer.byteLength(payload)).toBeGreaterThan(3 * CHUNK_BYTES);
    const { answer } = await post(port, authorization, pieces(JSON.stringify({ integrationSortingOrder: 50, payload }), 65_536));
    expect(answer?.status).toBe(202);
    const row = await ended(answer!.body['requestId'] as string);
    expect(row).toMatchObject({ status: 'Completed', record_count: 5_000 });
    expect(await customerNames('DEEP')).toHaveLength(5_000);
  });

  it('stores nothing when the client disconnects in the middle of the payload', async () => {
    const requestsBefore = await requestCount();
    const payload = JSON.stringify(customers(30_000, 'CUT'));
    const all = [...pieces(JSON.stringify({ integrationSortingOrder: 51, payload }), 65_536)];
    // More than two chunks' worth is sent (so chunks were written), then the socket is closed.
    const { sentAll } = await post(port, authorization, all, { stopAfter: Math.ceil((2.5 * CHUNK_BYTES) / 65_536) });
    expect(sentAll).toBe(false);
    await noStrayChunks('no chunk left of the cut-off payload');
    expect(await requestCount()).toBe(requestsBefore);
    expect(await customerNames('CUT')).toHaveLength(0);
  });

  it('answers 413 as soon as the payload exceeds Max Payload Size, before the body ends, and stores nothing', async () => {
    const requestsBefore = await requestCount();
    // Integration 10 (examples/customers.yaml) accepts at most 1024 KB.
    const payload = JSON.stringify(customers(60_000, 'BIG'));
    expect(Buffer.byteLength(payload)).toBeGreaterThan(4 * 1024 * 1024);
    const { answer, sentAll } = await post(port, authorization, pieces(JSON.stringify({ integrationSortingOrder: 10, payload }), 16_384), {
      answerEarly: true,
    });
    expect(answer?.status).toBe(413);
    expect(answer?.body).toMatchObject({ error: { code: 'payloadTooLarge' } });
    expect(String((answer?.body['error'] as { message: string }).message)).toMatch(/accepts at most 1024 KB/);
    expect(sentAll).toBe(false);
    await noStrayChunks('no chunk left of the refused payload');
    expect(await requestCount()).toBe(requestsBefore);
  });

  it('keeps escapes and surrogate pairs cut across pieces, byte by byte', async () => {
    const tricky = 'quote " backslash \\ slash / tab \t newline \n é ü ß 中文 😀 🎉 \u0001 end';
    const records = [{ no: 'ESC1', name: tricky }];
    // Escape every non-ASCII character as \uXXXX (surrogate pairs as two escapes) and send one byte at a time.
    const escaped = JSON.stringify(JSON.stringify(records)).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    const body = `{"integrationSortingOrder":51,"payload":${escaped}}`;
    const { answer } = await post(port, authorization, pieces(body, 1));
    expect(answer?.status).toBe(202);
    const requestId = answer!.body['requestId'] as string;
    const stored = await db()
      .selectFrom('ifw_bulk_import_request')
      .select('payload')
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow();
    expect(stored.payload).toBe(JSON.stringify(records));
    expect(await ended(requestId)).toMatchObject({ status: 'Completed', record_count: 1 });
    expect(await customerNames('ESC')).toEqual([{ no: 'ESC1', name: tricky }]);
  });

  it('refuses a payload that is not a JSON text, and one that breaks the schema, leaving nothing behind', async () => {
    const requestsBefore = await requestCount();
    const notJson = `[${JSON.stringify(customers(20_000, 'BAD')).slice(1, -1)},]`;
    const bad = await post(port, authorization, pieces(JSON.stringify({ integrationSortingOrder: 51, payload: notJson }), 65_536), {
      answerEarly: true,
    });
    expect(bad.answer).toMatchObject({ status: 400, body: { error: { code: 'payloadNotJson' } } });
    const unknown = await post(
      port,
      authorization,
      pieces(JSON.stringify({ payload: JSON.stringify(customers(20_000, 'BAD')), integrationSortingOrder: 51, extra: 1 }), 65_536),
    );
    expect(unknown.answer).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(String((unknown.answer?.body['error'] as { message: string }).message)).toMatch(/unknown property "extra"/);
    await noStrayChunks('no chunk left of the refused payloads');
    expect(await requestCount()).toBe(requestsBefore);
  });
});
