/**
 * Every answer of a test service checked against its own OpenAPI document (`/docs/json`), the way a
 * validating proxy in front of it would: the status is declared for the operation that answered, the
 * content type is one the document names for that status, and a JSON body matches that status's schema
 * (openapi-backend's validator, Ajv underneath). startTestService hooks it on every service it starts;
 * what does not match is collected and fails the test file at `cleanup()`, listed whole.
 *
 * Not checked, because the document cannot describe them: the console's HTML pages and assets (not API,
 * left out of the document), the document and its UI themselves (`/docs…`), the 404 for a URL no
 * route has, and an answer to a caller whose connection is already closed (nobody reads it). A route that is neither of these and is missing from the document is itself a mismatch.
 *
 * One validator per distinct document per process, its Ajv functions compiled on the first answer of
 * each operation, into one Ajv, once per distinct schema: test files of a worker share it (the fast
 * project does not isolate them).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import formats from 'ajv-formats';
import * as backend from 'openapi-backend';
import type { Document, Operation, OpenAPIBackend } from 'openapi-backend';
import { operationIdOf } from '../../src/http/openapi.js';
import type { App } from '../../src/http/server.js';

interface Checker {
  readonly api: OpenAPIBackend;
  readonly operations: ReadonlyMap<string, Operation>;
}

// A CommonJS module whose export is the plugin itself (its types describe the ES module form).
const addFormats = formats as unknown as typeof formats.default;
type Ajv = ReturnType<typeof addFormats>;

const checkers = new Map<string, Promise<Checker>>();
const byApp = new WeakMap<object, Promise<Checker>>();

/**
 * The Ajv with one compiled validator per distinct schema: openapi-backend compiles each status of each
 * operation on its own, although most share their schema (the error body of every 4xx, the envelopes of
 * a set's entity); the schemas have no $id, so the same text is the same validator.
 */
function compilingOnce(ajv: Ajv): Ajv {
  const compile = ajv.compile.bind(ajv);
  const compiled = new Map<string, ReturnType<Ajv['compile']>>();
  ajv.compile = ((schema: object) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = compile(schema);
      compiled.set(key, validate);
    }
    return validate;
  }) as Ajv['compile'];
  return ajv;
}

function checkerOf(app: App): Promise<Checker> {
  const known = byApp.get(app);
  if (known !== undefined) return known;
  const document = (app as unknown as { swagger(): Document }).swagger();
  const text = JSON.stringify(document);
  let checker: Promise<Checker> | undefined = checkers.get(text);
  if (checker === undefined) {
    // openapi-backend makes a new Ajv for each operation, and each compiles the JSON Schema meta-schema
    // anew (about 10 ms): the operations of a document share one per context instead. Their schemas
    // have no $id, so compiling them all into one Ajv cannot clash.
    const ajvs = new Map<string, Ajv>();
    // quick: the validators of an operation are compiled when it first answers, not all at start.
    const api = new backend.OpenAPIBackend({
      definition: JSON.parse(text) as Document,
      quick: true,
      strict: true,
      // The formats the routes' schemas name (date-time, uuid, …) are checked, as fastify's own Ajv does.
      customizeAjv: (ajv, options, context) => {
        const key = `${context} ${JSON.stringify(options)}`;
        let shared = ajvs.get(key);
        if (shared === undefined) {
          shared = compilingOnce(addFormats(ajv));
          ajvs.set(key, shared);
        }
        return shared;
      },
    });
    checker = api.init().then(() => ({ api, operations: new Map(api.getOperations().map((op) => [op.operationId ?? '', op])) }));
    checkers.set(text, checker);
  }
  byApp.set(app, checker);
  return checker;
}

/** The operationId the document gives the route that answered, as openapi.ts derives it. */
function operationIdFor(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url;
  if (url === undefined) return undefined;
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  return request.routeOptions.schema?.operationId ?? operationIdOf(method, url);
}

/** Whether the document is meant to describe this answer at all (see the file's comment). */
function documented(request: FastifyRequest): boolean {
  if (request.is404) return false;
  // The caller is gone (its body stopped arriving, its connection was closed): nobody reads this answer.
  if (request.raw.socket?.destroyed === true) return false;
  const url = request.routeOptions.url;
  if (url === undefined || url.startsWith('/docs')) return false;
  if (request.routeOptions.config.session === true) return false;
  return request.routeOptions.schema?.hide !== true;
}

const statusDeclared = (responses: Record<string, unknown>, status: number): string | undefined =>
  [String(status), `${Math.floor(status / 100)}XX`, 'default'].find((key) => responses[key] !== undefined);

function bodyText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined; // a stream: its bytes are not looked at
}

/** What the check needs of an answer, taken as it is sent. */
interface Answer {
  readonly operationId: string | undefined;
  readonly route: string;
  readonly method: string;
  readonly status: number;
  readonly type: string | undefined;
  readonly text: string | undefined;
}

function answerOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): Answer {
  const header = reply.getHeader('content-type');
  return {
    operationId: operationIdFor(request),
    route: `${request.method} ${request.routeOptions.url ?? ''}`,
    method: request.method,
    status: reply.statusCode,
    type: typeof header === 'string' ? (header.split(';')[0] ?? '').trim().toLowerCase() : undefined,
    text: bodyText(payload),
  };
}

/** What is wrong with one answer, or undefined when the document describes it. */
function answerProblem({ api, operations }: Checker, answer: Answer): string | undefined {
  const { operationId, status, type, text } = answer;
  const operation = operationId === undefined ? undefined : operations.get(operationId);
  if (operation === undefined) return `the route ${answer.route} is not in the document`;
  const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
  const key = statusDeclared(responses, status);
  if (key === undefined) return `status ${status} is not declared for ${operationId} (declared: ${Object.keys(responses).join(', ')})`;
  const declared = Object.keys(responses[key]?.content ?? {});
  if (answer.method === 'HEAD' || status === 204 || status === 304) return undefined;
  if (declared.length === 0)
    return text === '' ? undefined : `${operationId} ${status} declares no body, but one was sent (${type ?? 'no type'})`;
  if (type === undefined || !declared.includes(type))
    return `${operationId} ${status} answered ${type ?? 'no content type'}; the document declares ${declared.join(', ')}`;
  if (type !== 'application/json' || text === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${operationId} ${status} answered a body that is not JSON`;
  }
  const result = api.validator.validateResponse(body, operation, status);
  if (result.valid) return undefined;
  const errors = (result.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
  return `${operationId} ${status}: the body does not match its schema: ${errors}; body ${text.slice(0, 300)}`;
}

export interface AnswerChecks {
  /** Checks the answers sent so far: the problems found (the same list grows with later answers). */
  settled(): Promise<string[]>;
}

/**
 * Checks every answer `app` sends from now on (call it before the app is ready). An answer is taken as
 * it is sent and checked later, when `settled()` is called (the test service's cleanup does): the
 * service under test shares its event loop with the checks, and some tests measure how long it takes
 * to answer.
 */
export function checkAnswers(app: App): AnswerChecks {
  const problems: string[] = [];
  const waiting: { where: string; answer: Answer }[] = [];
  app.addHook('onSend', (request, reply, payload, done) => {
    if (documented(request))
      waiting.push({ where: `${request.method} ${request.url} → ${reply.statusCode}`, answer: answerOf(request, reply, payload) });
    done(null, payload);
  });
  return {
    async settled() {
      if (waiting.length === 0) return problems;
      const checker = await checkerOf(app);
      for (const { where, answer } of waiting.splice(0)) {
        let problem: string | undefined;
        try {
          problem = answerProblem(checker, answer);
        } catch (err) {
          problem = `the validator failed: ${err instanceof Error ? err.message : String(err)}`;
        }
        if (problem !== undefined) problems.push(`${where}: ${problem}`);
      }
      return problems;
    },
  };
}
