/**
 * The response validator every test service carries (test/helpers/openapi-answers.ts) fails a test for
 * an answer the OpenAPI document does not describe: a status the operation does not declare, a body
 * that breaks its schema, a content type the document does not name, a route missing from the document.
 * Shown with test-only routes that answer what they do not declare; the real routes pass it.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
  // Untyped by the routes' schemas: these routes answer what they do not declare, on purpose.
  const app = t.service.app as unknown as FastifyInstance;
  const answer = Type.Object({ ok: Type.Boolean() });
  const schema = (summary: string) => ({ summary, tags: ['Test'], response: { 200: answer } });
  // Routes added before the server is ready, so the document describes them as it does the real ones.
  app.get(`${API}/answersTeapot`, { schema: schema('Declares 200, answers 418'), config: { permission: 'read' } }, (_req, reply) =>
    (reply as FastifyReply).status(418).send({ error: { code: 'invalidRequest', message: 'a teapot' } }),
  );
  app.get(`${API}/answersDrift`, { schema: schema('Declares ok, answers without it'), config: { permission: 'read' } }, (_req, reply) =>
    // Sent as text so that fastify's serializer (which would drop the unknown property) does not tidy it.
    reply
      .type('application/json')
      .serializer((v) => JSON.stringify(v))
      .send({ okay: true }),
  );
  app.get(`${API}/answersText`, { schema: schema('Declares JSON, answers text'), config: { permission: 'read' } }, (_req, reply) =>
    reply.type('text/plain').send('ok'),
  );
  app.get(`${API}/answersUndocumented`, { schema: { hide: false, summary: 'x' }, config: { permission: 'read' } }, () => ({ ok: true }));
});
afterAll(async () => {
  (await t?.answerProblems())?.splice(0);
  await t?.cleanup();
});

/** What the validator found for the requests `run` sends, taken out of the list so that cleanup passes. */
async function problemsOf(run: () => Promise<unknown>): Promise<string[]> {
  (await t.answerProblems()).splice(0);
  await run();
  return (await t.answerProblems()).splice(0);
}

describe('the response validator of the test services', () => {
  it('passes the real routes: a submit, a poll, a list, a 404 and a 401', async () => {
    const found = await problemsOf(async () => {
      const submitted = await t.inject({
        method: 'POST',
        url: `${API}/bulkImportRequests`,
        payload: { integrationSortingOrder: 10, payload: '[]' },
      });
      expect(submitted.statusCode).toBe(202);
      const { requestId } = submitted.json<{ requestId: string }>();
      expect((await t.inject({ method: 'GET', url: `${API}/bulkImportRequests(${requestId})` })).statusCode).toBe(200);
      expect((await t.inject({ method: 'GET', url: `${API}/integrations` })).statusCode).toBe(200);
      expect((await t.inject({ method: 'GET', url: `${API}/integrations(404)` })).statusCode).toBe(404);
      expect((await t.inject({ method: 'GET', url: `${API}/integrations`, headers: { authorization: '' } })).statusCode).toBe(401);
    });
    expect(found).toEqual([]);
  });

  it('fails an answer with a status the operation does not declare', async () => {
    const found = await problemsOf(() => t.inject({ method: 'GET', url: `${API}/answersTeapot` }));
    expect(found).toEqual([expect.stringMatching(/→ 418: status 418 is not declared for listAnswersTeapot \(declared: 200, 400/)]);
  });

  it('fails a body that does not match the schema of its status', async () => {
    const found = await problemsOf(() => t.inject({ method: 'GET', url: `${API}/answersDrift` }));
    expect(found).toEqual([expect.stringMatching(/listAnswersDrift 200: the body does not match its schema: .*ok/)]);
  });

  it('fails a content type the document does not name for that status', async () => {
    const found = await problemsOf(() => t.inject({ method: 'GET', url: `${API}/answersText` }));
    expect(found).toEqual([expect.stringMatching(/listAnswersText 200 answered text\/plain; the document declares application\/json/)]);
  });

  it('fails the test file at cleanup while any such answer is left', async () => {
    const other = await startTestService({ applyExample: false });
    (other.service.app as unknown as FastifyInstance).get(
      `${API}/answersTeapot`,
      { schema: { summary: 'x', response: { 200: Type.Null() } }, config: { permission: 'public' } },
      (_r, reply) => (reply as FastifyReply).status(418).send(),
    );
    expect((await other.inject({ method: 'GET', url: `${API}/answersTeapot` })).statusCode).toBe(418);
    await expect(other.cleanup()).rejects.toThrow(/answers the OpenAPI document does not describe[\s\S]*status 418 is not declared/);
  });
});
