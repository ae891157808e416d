/**
 * The submit benchmark's baseline: a bare fastify route that validates the same body as the Bulk
 * Import API and answers 202 without storing anything. Prints its port on stdout. It receives the
 * same `Authorization` header as the service and ignores it: the baseline is the cost of HTTP, JSON
 * and validation, so the ratio shows what durability and authentication add.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
const Body = Type.Object(
  { integrationSortingOrder: Type.Integer(), payload: Type.String() },
  { additionalProperties: false, patternProperties: { '^@odata\\.': {} } },
);
app.post('/api/vendor/integrationFramework/v1.0/bulkImportRequests', { schema: { body: Body } }, async (request, reply) => {
  JSON.parse(request.body.payload);
  return reply.status(202).send({ requestId: randomUUID(), status: 'Pending', submittedAt: new Date().toISOString() });
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
console.log(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }));
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
