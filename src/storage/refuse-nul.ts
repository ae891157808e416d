/**
 * The last line of the rule that no text holds U+0000 (core/bounds.ts): every statement either dialect
 * runs through Kysely has its parameters looked at before the database sees them, and one holding
 * U+0000 is refused with a 400 instead of PostgreSQL's encoding error (a 500) or SQLite storing what
 * PostgreSQL could not. Where a value comes from a request body, the body's parser has already said
 * where (http/server.ts); imported records get a record error (mapping/); this catches the rest (a
 * key in a console URL, a query parameter, a form field), the same on both databases.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver } from 'kysely';
import { NUL, NUL_REASON } from '../core/bounds.js';
import { invalidRequest } from '../core/errors.js';

const guarded = new WeakSet<DatabaseConnection>();

function refuseNul(query: CompiledQuery): void {
  for (const value of query.parameters)
    if (typeof value === 'string' && value.includes(NUL)) throw invalidRequest(`A value sent ${NUL_REASON}; remove it.`);
}

function guard(connection: DatabaseConnection): DatabaseConnection {
  if (guarded.has(connection)) return connection;
  const execute = connection.executeQuery.bind(connection);
  const stream = connection.streamQuery.bind(connection);
  Object.assign(connection, {
    executeQuery: (query: CompiledQuery) => {
      refuseNul(query);
      return execute(query);
    },
    streamQuery: (query: CompiledQuery, chunkSize?: number) => {
      refuseNul(query);
      return stream(query, chunkSize);
    },
  });
  guarded.add(connection);
  return connection;
}

/** `dialect`, with every connection it hands out refusing a parameter that holds U+0000. */
export function refusingNul(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: (): Driver => {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = async () => guard(await acquire());
      return driver;
    },
  };
}
