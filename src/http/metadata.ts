/**
 * `$metadata` (the CSDL document every `@odata.context` points at) and the service document at the
 * API's root (`…/v1.0`, also written `…/v1.0/`), both derived from the routes as they are registered
 * (csdl.ts), so they describe exactly what the API answers; the keys come from the entity sets'
 * declarations (entity-set.ts), through the routes' config. XML by default, as OData 4.0 clients
 * expect; JSON with `$format=json` or an Accept header that asks for application/json alone.
 */
import { Type } from 'typebox';
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify';
import { badRequest } from '../core/errors.js';
import { API_BASE, formatOf } from './odata.js';
import { buildCsdl, type Csdl, type RouteShape } from './csdl.js';
import { csdlJson, csdlXml } from './csdl-render.js';

export const METADATA_PATH = `${API_BASE}/$metadata`;

/** Records the schemas of every route as it is registered; call before the feature routes register. */
export function recordRouteShapes(app: FastifyInstance): () => readonly RouteShape[] {
  const shapes: RouteShape[] = [];
  app.addHook('onRoute', (route) => {
    const schema = route.schema ?? {};
    const responses = (schema.response ?? {}) as Record<string, unknown>;
    const response = responses['200'] ?? responses['201'] ?? responses['202'];
    for (const method of Array.isArray(route.method) ? route.method : [route.method])
      shapes.push({ method, url: route.url, body: schema.body, response, key: route.config?.odataKey });
  });
  return () => shapes;
}

type Format = 'xml' | 'json';

/**
 * `$format` wins. Otherwise XML, as OData 4.0 clients (Excel, Power Query, odata2ts, most libraries)
 * read only XML, unless the Accept header asks for JSON alone: it names application/json (with q > 0)
 * and names no XML type and no wildcard. So axios's default `application/json, text/plain, *\/*`, fetch's
 * and curl's `*\/*`, and no header at all get XML.
 */
function negotiate(request: FastifyRequest): Format {
  const requested = (request.query as { $format?: string }).$format;
  if (requested !== undefined) {
    const format = formatOf(requested);
    if (format !== undefined) return format;
    throw badRequest('invalidQuery', `$format must be xml or json (or application/xml, application/json), got "${requested}".`);
  }
  const named = (request.headers.accept ?? '')
    .split(',')
    .map((item) => {
      const [type = '', ...params] = item.split(';').map((s) => s.trim().toLowerCase());
      const q = params.find((p) => p.startsWith('q='));
      return { type, q: q === undefined ? 1 : Number(q.slice(2)) || 0 };
    })
    .filter((a) => a.q > 0)
    .map((a) => a.type);
  const json = named.includes('application/json');
  const xmlOrAny = named.some((t) => t === 'application/xml' || t === 'text/xml' || t === '*/*' || t === 'application/*' || t === 'text/*');
  return json && !xmlOrAny ? 'json' : 'xml';
}

export function metadataRoutes(shapes: () => readonly RouteShape[]): FastifyPluginCallback {
  let model: Csdl | undefined;
  let xml: string | undefined;
  let json: string | undefined;
  const current = (): Csdl => (model ??= buildCsdl(API_BASE, shapes()));

  return (app, _options, registered) => {
    // Built once every route is registered, so that a route the model cannot describe stops the start.
    app.addHook('onReady', (done) => {
      try {
        current();
        done();
      } catch (err) {
        done(err as Error);
      }
    });

    app.get(
      METADATA_PATH,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'The OData CSDL document: entity types, keys, properties, entity sets and bound actions',
          description:
            'XML (application/xml, OData-Version 4.0) by default and to any Accept that names XML or a wildcard; JSON (OData-Version 4.01) with $format=json or an Accept of application/json alone. Every @odata.context points into it.',
          tags: ['OData'],
          querystring: Type.Object({ $format: Type.Optional(Type.String()) }, { additionalProperties: false }),
          response: {
            200: {
              description: 'The CSDL document',
              content: {
                'application/xml': { schema: Type.String({ description: 'CSDL XML (OData 4.0)' }) },
                'application/json': { schema: Type.Object({}, { description: 'CSDL JSON (OData 4.01)', additionalProperties: true }) },
              },
            },
          },
        },
      },
      async (request, reply) => {
        const format = negotiate(request);
        // The JSON form of CSDL is defined by OData 4.01; the XML form is OData 4.0's.
        void reply.header('odata-version', format === 'json' ? '4.01' : '4.0');
        if (format === 'json') {
          json ??= JSON.stringify(csdlJson(current()));
          return reply.type('application/json; charset=utf-8').send(json);
        }
        xml ??= csdlXml(current());
        return reply.type('application/xml; charset=utf-8').send(xml);
      },
    );

    const serviceDocument = () =>
      Promise.resolve({
        '@odata.context': METADATA_PATH,
        value: current().entitySets.map((s) => ({ name: s.name, kind: 'EntitySet', url: s.name })),
      });
    const documentSchema = {
      summary: 'The OData service document: the entity sets, each with its URL relative to this root',
      tags: ['OData'],
      response: {
        200: Type.Object({
          '@odata.context': Type.String(),
          value: Type.Array(Type.Object({ name: Type.String(), kind: Type.String(), url: Type.String() })),
        }),
      },
    };
    app.get(API_BASE, { config: { permission: 'read' }, schema: documentSchema }, serviceDocument);
    registered();
  };
}
