/**
 * The submit benchmark's second baseline: the bare route (bare-server.ts) that also makes each
 * request durable the cheapest honest way before its 202. The id and body are inserted into a table
 * with only its primary key, on a writer thread, in a fresh SQLite file (WAL, synchronous=FULL), and
 * requests that arrive while a commit is under way share the next one (group commit), as the
 * service's submissions do. No authentication, no integration lookup, no log line, no payload
 * scan: the ratio of the service to this route is what the service spends beyond durability itself.
 * Prints its port on stdout; the database file is argv[2].
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

interface Row {
  readonly id: string;
  readonly body: string;
}

/** The writer thread: plain CommonJS, so it needs no loader; one transaction per batch it is sent. */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const BetterSqlite3 = require(workerData.betterSqlite3);
const db = new BetterSqlite3(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists request (id text primary key, body text not null) without rowid');
const insert = db.prepare('insert into request (id, body) values (?, ?)');
const insertAll = db.transaction((rows) => { for (const row of rows) insert.run(row.id, row.body); });
parentPort.on('message', (rows) => { insertAll.immediate(rows); parentPort.postMessage(rows.length); });
`;

const file = process.argv[2];
if (file === undefined) throw new Error('usage: durable-server.ts <database file>');
const writer = new Worker(WRITER, {
  eval: true,
  workerData: { file, betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3') },
});

// Rows waiting for the next commit, with their callers; a commit in flight holds the batch before.
let waiting: { rows: Row[]; done: (() => void)[] } = { rows: [], done: [] };
let inFlight: (() => void)[] | null = null;
const commitNext = (): void => {
  if (inFlight !== null || waiting.rows.length === 0) return;
  inFlight = waiting.done;
  writer.postMessage(waiting.rows);
  waiting = { rows: [], done: [] };
};
writer.on('message', () => {
  const done = inFlight ?? [];
  inFlight = null;
  for (const resolve of done) resolve();
  commitNext();
});
writer.on('error', (err) => {
  console.error(err);
  process.exit(1);
});
const durable = (row: Row): Promise<void> =>
  new Promise((resolve) => {
    waiting.rows.push(row);
    waiting.done.push(resolve);
    commitNext();
  });

const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
const Body = Type.Object(
  { integrationSortingOrder: Type.Integer(), payload: Type.String() },
  { additionalProperties: false, patternProperties: { '^@odata\\.': {} } },
);
app.post('/api/vendor/integrationFramework/v1.0/bulkImportRequests', { schema: { body: Body } }, async (request, reply) => {
  JSON.parse(request.body.payload);
  const requestId = randomUUID();
  await durable({ id: requestId, body: request.body.payload });
  return reply.status(202).send({ requestId, status: 'Pending', submittedAt: new Date().toISOString() });
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
console.log(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }));
process.on('SIGTERM', () => void app.close().then(() => writer.terminate().then(() => process.exit(0))));
