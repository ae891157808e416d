/**
 * fastify's own schema compilers (ajv for requests, fast-json-stringify for answers), with what they
 * compile remembered for the whole process, keyed by the schema's JSON text and the compiler's options.
 * Compiling the routes' schemas is most of what building a server costs (≈ 0.4 s of CPU for the
 * service's routes); a process that builds a second server with the same routes (the in-process tests
 * build hundreds) reuses the compiled functions instead. A compiled function holds no per-server
 * state: both compilers answer the same function for the same schema text and options.
 *
 * The compilers are loaded from fastify's own dependencies, the way fastify loads its defaults, so they
 * are the versions fastify was released with.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** What fastify hands a validator compiler for one part of one route. */
interface RouteSchema {
  readonly schema: unknown;
  readonly method?: string;
  readonly url?: string;
  readonly httpPart?: string;
  readonly httpStatus?: string;
}

type Compile = (route: RouteSchema) => unknown;
type CompilerFactory = (externalSchemas: unknown, options: unknown) => Compile;

const fromFastify = createRequire(import.meta.resolve('fastify'));
const { AjvCompiler } = fromFastify('@fastify/ajv-compiler') as { AjvCompiler: () => CompilerFactory };
const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => CompilerFactory };

/** ajv instances, one per set of shared schemas and options (the pool fastify would keep per server). */
const ajvPool = AjvCompiler();
const serializerFactory = SerializerSelector();

const compiled = new Map<string, unknown>();

/**
 * fastify lowercases a headers schema's property names (header names are case-insensitive) only for
 * its default compiler; with a compiler of its own the server must do it, as here. No route declares
 * headers today; this keeps one that does working as with fastify's default.
 */
function lowerCaseHeaders(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const { properties, required, ...rest } = schema as { properties?: Record<string, unknown>; required?: unknown };
  return {
    ...rest,
    ...(properties === undefined
      ? {}
      : { properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value])) }),
    ...(Array.isArray(required)
      ? { required: (required as unknown[]).map((name) => (typeof name === 'string' ? name.toLowerCase() : name)) }
      : {}),
  };
}

/** A compiler factory whose compilers remember, per process, what `factory`'s compilers compiled. */
function remembering(kind: string, factory: CompilerFactory): CompilerFactory {
  return (externalSchemas, options) => {
    const scope = `${kind}\0${JSON.stringify(externalSchemas)}\0${JSON.stringify(options) ?? ''}\0`;
    let compile: Compile | undefined;
    return (route) => {
      const key = scope + (JSON.stringify(route.schema) ?? String(route.schema));
      let fn = compiled.get(key);
      if (fn === undefined) {
        compile ??= factory(externalSchemas, options);
        fn = compile(route);
        compiled.set(key, fn);
      }
      return fn;
    };
  };
}

const validatorFactory = remembering('validator', ajvPool);
const rememberingSerializer = remembering('serializer', serializerFactory);

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** fastify's `schemaController.compilersFactory` for every server this process builds. */
export const SHARED_COMPILERS = {
  buildValidator: (externalSchemas: unknown, options: unknown): Compile => {
    const compile = validatorFactory(externalSchemas, options);
    return (route) => compile(route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaders(route.schema) } : route);
  },
  buildSerializer: rememberingSerializer,
} as unknown as CompilersFactory;
