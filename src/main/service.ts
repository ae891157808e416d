/**
 * `ifw serve`, built by the composition root: the world (world.ts), the job queue when this process
 * runs workers (job-queue.ts), the submission path, authentication, and the HTTP server with every
 * feature's routes.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createAccounts, ensureInitialAdministrator, type Accounts, type InitialAdministrator } from '../accounts/accounts.js';
import { createAuthenticator } from '../auth/authenticate.js';
import { loadDevIssuer, trustedIssuerNames, type DevIssuer } from '../auth/dev-issuer.js';
import { createDirectory } from '../auth/directory.js';
import { createTokenValidator, type TokenValidator } from '../auth/jwt.js';
import type { IssuerConfig } from '../auth/issuers.js';
import { bulkImportPages } from '../bulk-import/pages.js';
import { bulkImportRoutes } from '../bulk-import/routes.js';
import { bulkImportAdminRoutes } from '../bulk-import/admin-routes.js';
import { consoleRoutes } from '../console/console.js';
import { accountPages } from '../accounts/pages.js';
import { createSessions } from '../console/sessions.js';
import { dashboardPages } from '../dashboard/pages.js';
import { tryPayloadPages } from '../bulk-import/try-payload-page.js';
import { integrationPages } from '../integrations/pages.js';
import { jobQueuePages } from '../job-queue/pages.js';
import { workerPages } from '../job-queue/workers-page.js';
import { workerRoutes } from '../job-queue/workers-routes.js';
import { createMetrics } from '../core/metrics.js';
import { processorAlarm } from '../dashboard/alarms.js';
import { createScrape, metricsRoutes } from '../dashboard/metrics.js';
import { alarmRoutes } from '../dashboard/routes.js';
import { tablePages } from '../tables/pages.js';
import { importRunPages } from '../import-runs/pages.js';
import { connectionPages } from '../rest-source/connection-pages.js';
import { endpointPages } from '../rest-source/endpoint-pages.js';
import { fromSamplePages } from '../from-sample/pages.js';
import { createRequestWriter } from '../bulk-import/sqlite/request-writer.js';
import { postgresRequestStore } from '../bulk-import/postgres/request-store.js';
import { createSubmitter } from '../bulk-import/submit.js';
import { buildServer, type App } from '../http/server.js';
import { healthRoutes } from '../http/health.js';
import { findActiveRun } from '../import-runs/queue-run.js';
import { importRunRoutes } from '../import-runs/routes.js';
import { integrationRoutes } from '../integrations/routes.js';
import { jobQueueRoutes } from '../job-queue/routes.js';
import { restApiRoutes } from '../rest-source/routes.js';
import { cursorRoutes } from '../rest-source/cursor-routes.js';
import { securityRoutes } from '../accounts/routes.js';
import { targetTableRowRoutes } from '../tables/row-routes.js';
import { targetTableRoutes } from '../tables/routes.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { webhookRoutes } from '../webhooks/routes.js';
import { webhookPages } from '../webhooks/pages.js';
import type { QueueHost } from '../job-queue/host.js';
import { createNotifier } from '../job-queue/postgres/wake-channel.js';
import type { Database } from '../storage/database.js';
import { startJobQueue } from './job-queue.js';
import { openWorld } from './world.js';

export interface Service {
  readonly config: Config;
  readonly clock: Clock;
  readonly app: App;
  readonly db: Database;
  readonly queue: QueueHost | undefined;
  /** Seals and opens stored secrets (REST API connection credentials). */
  readonly secrets: SecretBox;
  /** Users and applications. */
  readonly accounts: Accounts;
  /** The development token issuer, when IFW_DEV_TOKEN_ISSUER is on. */
  readonly devIssuer: DevIssuer | undefined;
  /** Set when this start created the first administrator (empty database). */
  readonly initialAdministrator: InitialAdministrator | undefined;
  /** Listens on config.host:config.port; resolves with the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const world = await openWorld(config, options);
  const { clock, logger, db, secrets } = world;

  const directory = createDirectory(db.kysely, clock, config.directoryCacheMs);
  const accounts = createAccounts(db.kysely, {
    clock,
    issuers: trustedIssuerNames(config),
    onChange: () => directory.invalidate(),
  });
  // Before any thread starts: a first start refused for its administrator settings ends at once.
  const initialAdministrator = await ensureInitialAdministrator(accounts, db.kysely, {
    userName: config.adminUser,
    password: config.adminPassword,
  }).catch(async (err: unknown) => {
    await world.close();
    throw err;
  });

  const metrics = createMetrics();
  // What the hot paths count into; nothing when IFW_METRICS is off.
  const counting = config.metrics ? { metrics } : {};
  const queue = config.workers ? await startJobQueue(config, { logger, clock, db, ...counting }) : undefined;
  // On PostgreSQL the workers may be other processes: a wake is also a NOTIFY, sent after the commit.
  const notify = db.dialect === 'postgres' ? createNotifier(db, logger) : undefined;
  const wake = (): void => {
    queue?.wake();
    notify?.();
  };
  // On SQLite the commit (and its fsync) of accepted submissions happens on a writer thread.
  const writer = config.database.kind === 'sqlite' ? createRequestWriter(config.database.file, logger) : undefined;
  const submitter = createSubmitter(db.kysely, {
    clock,
    store: writer ?? (db.dialect === 'postgres' ? postgresRequestStore(db) : undefined),
    onCommitted: wake,
    idempotencyWindowMs: config.idempotencyHours * 3_600_000,
    ...counting,
  });
  const alarmSettings = { pendingAlarmSeconds: config.pendingAlarmSeconds, workerDeadSeconds: config.workerDeadSeconds };
  const scrape = createScrape({ db, clock, metrics, alarms: alarmSettings, threads: () => queue?.metrics() ?? Promise.resolve([]) });

  const devIssuer = config.devTokenIssuer ? await loadDevIssuer(config.dataDir) : undefined;
  const authenticator = createAuthenticator({
    directory,
    clock,
    basic: config.basicAuth,
    tokens: tokenValidator(config, devIssuer, clock),
  });
  const sessions = createSessions(db.kysely, clock, {
    idleMs: config.consoleIdleMinutes * 60_000,
    absoluteMs: config.consoleSessionHours * 3_600_000,
    maxPerUser: config.consoleMaxSessions,
  });
  const { outbound } = config;
  const app = await buildServer({
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    authenticator,
    trustProxy: config.trustProxy,
    ...counting,
    connections: {
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
      idleTimeoutMs: config.idleTimeoutSeconds * 1000,
      keepAliveTimeoutMs: config.keepAliveTimeoutSeconds * 1000,
      maxConnections: config.maxConnections,
    },
    routes: [
      healthRoutes({
        db,
        queue,
        processorAlarm: async () => (await processorAlarm(db, clock(), alarmSettings))?.symptom,
      }),
      metricsRoutes(scrape),
      bulkImportRoutes({ db, clock, submitter, bodyLimitBytes: config.bodyLimitBytes, maxPageSize: config.maxPageSize, wake }),
      bulkImportAdminRoutes({ db, clock, submitter, wake }),
      targetTableRoutes({ db, clock }),
      targetTableRowRoutes({ db, maxPageSize: config.maxPageSize }),
      integrationRoutes({ db, clock }),
      jobQueueRoutes({ db, clock, queue: { wake } }),
      workerRoutes({ db, clock, config }),
      alarmRoutes({ db, clock, settings: alarmSettings }),
      restApiRoutes({ db, clock, secrets, outbound, activeRunOf: findActiveRun }),
      cursorRoutes({ db, clock }),
      importRunRoutes({ db, clock, wake, maxPageSize: config.maxPageSize }),
      webhookRoutes({ db, clock, secrets: () => secrets, maxPageSize: config.maxPageSize }),
      securityRoutes({ accounts, devIssuer }),
      consoleRoutes({
        sessions,
        authenticator,
        pages: [
          dashboardPages({ db, clock, alarms: alarmSettings }),
          bulkImportPages({ db: db.kysely, clock, wake, checkIntegration: (sortingOrder) => submitter.integration(sortingOrder) }),
          integrationPages({ db, clock }),
          tryPayloadPages(db),
          tablePages({ db, clock }),
          connectionPages({ db, clock, secrets, outbound }),
          endpointPages({ db, clock, secrets, outbound }),
          fromSamplePages({ db, clock, secrets, outbound }),
          importRunPages({ db, clock, wake }),
          jobQueuePages({ db, clock, wake }),
          workerPages({ db, clock, config }),
          webhookPages({ db, clock, secrets: () => secrets }),
          accountPages({ accounts }),
        ],
      }),
    ],
  });

  let closed = false;
  return {
    config,
    clock,
    app,
    db,
    queue,
    secrets,
    accounts,
    devIssuer,
    initialAdministrator,
    async listen() {
      const address = await app.listen({ host: config.host, port: config.port });
      logger.info({ address, database: config.database.kind, workers: config.workers }, 'integration service listening');
      return address;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await submitter.drain();
      await writer?.close();
      await queue?.close();
      await world.close();
    },
  };
}

/** Validates bearer tokens of the configured issuers and the development issuer; undefined when there are none. */
function tokenValidator(config: Config, devIssuer: DevIssuer | undefined, clock: Clock): TokenValidator | undefined {
  const issuers: IssuerConfig[] = [...config.tokenIssuers, ...(devIssuer === undefined ? [] : [devIssuer.trust])];
  if (issuers.length === 0) return undefined;
  return createTokenValidator({ issuers, clock, clockToleranceSeconds: config.tokenClockSkewSeconds });
}
