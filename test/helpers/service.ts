/**
 * A whole service, configured from the example config: on a fresh SQLite file in a temp directory, or
 * on the database `databaseUrl` names (see databases.ts for fresh PostgreSQL databases). The temp
 * directory holds the development token issuer's key and the secret key either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/core/config.js';
import { applyConfigFile } from '../../src/declarative-config/apply.js';
import { createLogger } from '../../src/core/logger.js';
import { createService, type Service } from '../../src/main/service.js';
import type { Clock } from '../../src/core/clock.js';
import { systemClock } from '../../src/core/clock.js';
import type { PermissionSetName } from '../../src/auth/permission-sets.js';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { registerTestApplications, type Headers } from './auth.js';
import { copySqliteTemplate, type Backend } from './databases.js';
import { checkAnswers } from './openapi-answers.js';

export const API = '/api/vendor/integrationFramework/v1.0';
export const EXAMPLE_CONFIG = path.resolve(import.meta.dirname, '../../examples/customers.yaml');

export interface TestService {
  readonly service: Service;
  readonly dir: string;
  readonly config: Config;
  /** Bearer headers of a registered SUPER application (development token issuer). */
  readonly headers: Headers;
  headersFor(set: PermissionSetName): Promise<Headers>;
  /**
   * The answers so far that the OpenAPI document does not describe (openapi-answers.ts), once their
   * checks are done; `cleanup()` fails with them. Always empty with `checkAnswers: false`.
   */
  answerProblems(): Promise<string[]>;
  /** `service.app.inject` with the SUPER application's credentials (headers given win). */
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  cleanup(): Promise<void>;
}

export interface TestServiceOptions {
  workers?: boolean;
  clock?: Clock;
  config?: Partial<Config>;
  applyExample?: boolean;
  databaseUrl?: string;
  /**
   * Check every answer against the OpenAPI document (default true). Off only where a test sends what
   * the document cannot describe; such a test says why.
   */
  checkAnswers?: boolean;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-test-'));
  // The service migrates at start: on a copy of the migrated template there is nothing left to do.
  if (options.databaseUrl === undefined && options.config?.database === undefined) copySqliteTemplate(path.join(dir, 'ifw.db'));
  const config = loadConfig(
    {},
    {
      dataDir: dir,
      logLevel: 'silent',
      port: 0,
      workers: options.workers ?? false,
      schedulerTickMs: 50,
      devTokenIssuer: true,
      ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
      ...options.config,
    },
  );
  const service = await createService(config, { clock: options.clock ?? systemClock, logger: createLogger(config) });
  const checks = options.checkAnswers === false ? undefined : checkAnswers(service.app);
  const answerProblems = async (): Promise<string[]> => (checks === undefined ? [] : checks.settled());
  if (options.applyExample !== false) await applyConfigFile(service.db, EXAMPLE_CONFIG, options.clock ?? systemClock);
  const headersFor =
    service.devIssuer === undefined ? undefined : await registerTestApplications(service.accounts, service.devIssuer, options.clock);
  const headers = headersFor === undefined ? { authorization: '' } : await headersFor('SUPER');
  return {
    service,
    dir,
    config,
    headers,
    answerProblems,
    headersFor(set) {
      if (headersFor === undefined) throw new Error('the development token issuer is off in this test service');
      return headersFor(set);
    },
    inject: (opts) => service.app.inject({ ...opts, headers: { ...headers, ...opts.headers } }),
    async cleanup() {
      await service.close();
      fs.rmSync(dir, { recursive: true, force: true });
      const problems = await answerProblems();
      if (problems.length > 0)
        throw new Error(`answers the OpenAPI document does not describe (test/helpers/openapi-answers.ts):\n${problems.join('\n')}`);
    },
  };
}

/**
 * A service on `backend`: its own SQLite file, or a fresh PostgreSQL database (`cleanup()` gives that
 * back too).
 */
export async function startTestServiceOn(backend: Backend, options: Omit<TestServiceOptions, 'databaseUrl'> = {}): Promise<TestService> {
  const fresh = backend.name === 'postgres' ? await backend.fresh() : undefined;
  const t = await startTestService({ ...options, ...(fresh === undefined ? {} : { databaseUrl: fresh.url }) });
  return {
    ...t,
    async cleanup() {
      try {
        await t.cleanup();
      } finally {
        await fresh?.cleanup();
      }
    },
  };
}

/**
 * A service listening on 127.0.0.1 (an ephemeral port), for the `ifw` client commands run as
 * processes: its URL, and the environment with IFW_TOKEN of its SUPER application.
 */
export async function startListeningService(
  config: Partial<Config> = {},
): Promise<{ t: TestService; url: string; env: NodeJS.ProcessEnv }> {
  const t = await startTestService({ config: { host: '127.0.0.1', port: 0, ...config } });
  const url = (await t.service.listen()).replace('localhost', '127.0.0.1');
  return { t, url, env: { IFW_TOKEN: t.headers.authorization.replace(/^Bearer /, '') } };
}
