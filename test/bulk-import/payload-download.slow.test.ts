/**
 * A 100 MB payload downloads whole over a real socket while the service's memory stays under the
 * payload's size, on SQLite and PostgreSQL. The service runs as its own process (`ifw serve`), so its
 * memory is its own: the peak of its resident set during the download is read from the kernel
 * (/proc/<pid>/status VmHWM, the peak reset just before through /proc/<pid>/clear_refs), not sampled.
 * A service that gathered the payload before sending it would hold at least its 100 MB.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { assertBuilt, basicAuth, startServer, type ServerProcess } from '../helpers/process.js';

const ADMIN_PASSWORD = 'payload-download-administrator';
const CHUNK = 1 << 20;
const CHUNKS = 100;
const REQUEST_ID = '0190f0e0-0000-7000-8000-00000000d001';

/** Chunk `seq` of a JSON array of records, 1 MB exactly: records padded to fill it, commas between chunks' records. */
function chunkOf(seq: number): Buffer {
  const open = seq === 0 ? '[' : ',';
  const close = seq === CHUNKS - 1 ? ']' : '';
  const record = (i: number) => `{"no":"C${seq}-${i}","name":"${'x'.repeat(80)}"}`;
  let text = open;
  let i = 0;
  while (text.length + record(i).length + 1 + close.length < CHUNK - 120) text += (i === 0 ? '' : ',') + record(i++);
  const last = `{"no":"C${seq}-${i}","name":"`;
  const pad = CHUNK - text.length - (i === 0 ? 0 : 1) - last.length - 2 - close.length;
  text += (i === 0 ? '' : ',') + last + 'y'.repeat(pad) + '"}' + close;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length !== CHUNK) throw new Error(`chunk ${seq} is ${bytes.length} bytes`);
  return bytes;
}

const kib = (status: string, field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`a 100 MB payload download on ${backend.name}`, () => {
    let dir: string;
    let fresh: FreshDatabase | undefined;
    let server: ServerProcess;
    let db: Database;
    const expected = createHash('sha256');

    beforeAll(async () => {
      assertBuilt();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-payload-'));
      fresh = backend.name === 'postgres' ? await backend.fresh() : undefined;
      const env = {
        // A heap of 128 MB, as a container with little memory would give it: garbage (PostgreSQL's bytea
        // arrives as hex text, three times a chunk's bytes) is collected as it goes rather than when V8
        // finds it convenient, so the peak measures what the service holds, not what it has not freed yet.
        NODE_OPTIONS: '--max-old-space-size=128',
        IFW_DATA_DIR: dir,
        IFW_ADMIN_PASSWORD: ADMIN_PASSWORD,
        ...(fresh === undefined ? {} : { IFW_DATABASE_URL: fresh.url }),
      };
      server = await startServer(env, ['--no-workers']);
      db = openDatabase(loadConfig(env).database);
      // Stored as the service stores a streamed upload: the row and its chunks (upload.ts), straight into storage.
      await db.kysely
        .insertInto('ifw_bulk_import_request')
        .values({
          request_id: REQUEST_ID,
          integration_sorting_order: 10,
          payload: '',
          payload_chunks: CHUNKS,
          payload_length: CHUNKS * CHUNK,
          status: 'Completed',
          submitted_at: new Date().toISOString(),
          ended_at: new Date().toISOString(),
        })
        .execute();
      for (let seq = 0; seq < CHUNKS; seq++) {
        const data = chunkOf(seq);
        expected.update(data);
        await db.kysely.insertInto('ifw_bulk_import_payload_chunk').values({ request_id: REQUEST_ID, seq, data }).execute();
      }
    }, 600_000);
    afterAll(async () => {
      await server?.stop();
      await db?.close();
      await fresh?.cleanup();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('streams every byte while the service grows by less than the payload', async () => {
      const pid = server.child.pid!;
      const status = () => fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      // Warm the route once (its code and the first chunk's buffers are no part of the payload's cost).
      const url = new URL(`${server.baseUrl}/api/vendor/integrationFramework/v1.0/bulkImportRequests(${REQUEST_ID})/payload`);
      const get = (onData: (part: Buffer) => void) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
          http
            .get(url, { headers: basicAuth('admin', ADMIN_PASSWORD) }, (res) => {
              res.on('data', onData);
              res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
              res.on('error', reject);
            })
            .on('error', reject);
        });
      const before = kib(status(), 'VmRSS');
      // Reset the peak resident set to the current one (Linux: "5" clears VmHWM).
      fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const got = createHash('sha256');
      let bytes = 0;
      const answer = await get((part) => {
        got.update(part);
        bytes += part.length;
      });
      const peak = kib(status(), 'VmHWM');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-disposition']).toBe(`attachment; filename="${REQUEST_ID}.json"`);
      expect(bytes).toBe(CHUNKS * CHUNK);
      expect(got.digest('hex')).toBe(expected.digest('hex'));
      const growth = peak - before;
      // The payload is 100 MB: a service holding it whole would grow by at least that much.
      console.log(
        `${backend.name}: resident set ${Math.round(before / 2 ** 20)} MB before, peak ${Math.round(peak / 2 ** 20)} MB during the download (growth ${Math.round(growth / 2 ** 20)} MB of a ${CHUNKS} MB payload)`,
      );
      expect(growth).toBeLessThan(CHUNKS * CHUNK);
    }, 600_000);
  });
}
