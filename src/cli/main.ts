/**
 * The `ifw` command. Server commands (serve, worker, migrate, apply, run-endpoint, users, apps) work on
 * the configured database through the composition root; client commands (submit, status:
 * client-commands.ts; requests: request-commands.ts; runs: run-commands.ts; endpoints: endpoint-commands.ts) talk to a running service over HTTP.
 */
import { Command, Option } from 'commander';
import { ConfigError, loadConfig, type ConfigOverrides } from '../core/config.js';
import { AppError } from '../core/errors.js';
import { applyConfigFile } from '../declarative-config/apply.js';
import { createLogger } from '../core/logger.js';
import { startWorker } from '../main/job-queue.js';
import { runEndpointOnce } from '../main/run-endpoint.js';
import { createService } from '../main/service.js';
import { withWorld } from '../main/world.js';
import { addClientCommands } from './client-commands.js';
import { addEndpointCommands } from './endpoint-commands.js';
import { addRunCommands } from './run-commands.js';
import { addSecurityCommands } from './security-commands.js';

interface ServerFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  databaseUrl?: string;
  workers?: boolean;
  logLevel?: string;
}

function overrides(flags: ServerFlags): ConfigOverrides {
  const o: ConfigOverrides = {};
  if (flags.host !== undefined) o.host = flags.host;
  if (flags.port !== undefined) {
    if (!/^\d{1,5}$/.test(flags.port)) throw new ConfigError(`--port must be a port number, got "${flags.port}"`);
    o.port = Number(flags.port);
  }
  if (flags.dataDir !== undefined) o.dataDir = flags.dataDir;
  if (flags.databaseUrl !== undefined) o.databaseUrl = flags.databaseUrl;
  if (flags.workers === false) o.workers = false;
  if (flags.logLevel !== undefined) o.logLevel = flags.logLevel as ConfigOverrides['logLevel'];
  return o;
}

const withDatabaseFlags = (cmd: Command) =>
  cmd
    .addOption(new Option('--data-dir <dir>', 'data directory (IFW_DATA_DIR, default ./data)'))
    .addOption(new Option('--database-url <url>', 'database (IFW_DATABASE_URL, default <data-dir>/ifw.db)'))
    .addOption(new Option('--log-level <level>', 'log level (IFW_LOG_LEVEL, default info)'));

const program = new Command();
program.name('ifw').description('Integration service: Bulk Import API and REST imports into target tables').showHelpAfterError();

withDatabaseFlags(
  program
    .command('serve')
    .description('run the HTTP API and, unless --no-workers, the job queue in this process')
    .option('--host <host>', 'listen address (IFW_HOST, default 127.0.0.1)')
    .option('--port <port>', 'listen port (IFW_PORT, default 8080)')
    .option('--no-workers', 'API only: do not run the job queue in this process')
    .option('--apply <file>', 'apply a declarative configuration file before listening (idempotent)'),
).action(async (flags: ServerFlags & { apply?: string }) => {
  const config = loadConfig(process.env, overrides(flags));
  const service = await createService(config);
  const admin = service.initialAdministrator;
  if (admin?.generatedPassword !== undefined) {
    // Printed once, to the terminal that started the service; never logged, never stored in clear.
    process.stderr.write(
      `\nFirst start: created the administrator user "${admin.userName}" (permission set SUPER).\n` +
        `Its password, shown only this once: ${admin.generatedPassword}\n` +
        `Use it with Basic authentication (curl -u ${admin.userName}:<password> …); change it with: ifw users set-password ${admin.userName}\n\n`,
    );
  }
  if (flags.apply !== undefined) {
    const report = await applyConfigFile(service.db, flags.apply, service.clock, { secrets: service.secrets });
    service.app.log.info({ file: flags.apply, report }, 'configuration applied');
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'shutting down');
    service
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        service.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await service.listen();
});

withDatabaseFlags(
  program
    .command('worker')
    .description('run the job queue only (no HTTP): bulk import processing, import runs, schedules, retention')
    .option(
      '--concurrency <n>',
      'concurrent bulk import claim loops (IFW_WORKER_CONCURRENCY, default 1; PostgreSQL only, SQLite has one writer)',
    ),
).action(async (flags: ServerFlags & { concurrency?: string }) => {
  const o = overrides(flags);
  if (flags.concurrency !== undefined) {
    if (!/^\d{1,3}$/.test(flags.concurrency) || Number(flags.concurrency) < 1)
      throw new ConfigError(`--concurrency must be a whole number from 1, got "${flags.concurrency}"`);
    o.workerConcurrency = Number(flags.concurrency);
  }
  const config = loadConfig(process.env, { ...o, workers: true });
  const logger = createLogger(config);
  const host = await startWorker(config, { logger });
  logger.info({ database: config.database.kind, concurrency: config.workerConcurrency }, 'job queue workers started');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // No further claims; the requests in progress finish (or, after the close timeout, go back to Pending).
    logger.info({ signal }, 'shutting down the workers');
    host
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
});

withDatabaseFlags(program.command('migrate').description('create or upgrade the database schema')).action(async (flags: ServerFlags) => {
  const applied = await withWorld(loadConfig(process.env, overrides(flags)), {}, (world) => Promise.resolve(world.migrated));
  console.log(applied.length === 0 ? 'database is up to date' : `applied: ${applied.join(', ')}`);
});

withDatabaseFlags(
  program
    .command('apply')
    .description(
      'apply a declarative configuration file (target tables, integrations, REST API connections and endpoints, job queue entries)',
    )
    .argument('<file>', 'YAML file'),
).action(async (file: string, flags: ServerFlags) => {
  const report = await withWorld(loadConfig(process.env, overrides(flags)), {}, (world) =>
    applyConfigFile(world.db, file, world.clock, { secrets: world.secrets }),
  );
  console.log(JSON.stringify(report, null, 2));
});

withDatabaseFlags(
  program
    .command('run-endpoint')
    .description('import from a REST API endpoint now, in this process; prints the run as JSON (exit code 1 unless Completed)')
    .argument('<code>', 'REST API endpoint code'),
).action(async (code: string, flags: ServerFlags) => {
  const config = loadConfig(process.env, overrides(flags));
  // Logs go to stderr: stdout is the run's JSON. A service on the same database may hold the write lock
  // for a moment: wait for it instead of failing.
  const logger = createLogger(config, {}, 2);
  const run = await withWorld(config, { logger, busyTimeoutMs: 10_000 }, (world) => runEndpointOnce(world, code));
  console.log(JSON.stringify(run, null, 2));
  if (run.status !== 'Completed') process.exitCode = 1;
});

addSecurityCommands(program, { withDatabaseFlags, configFrom: (flags) => loadConfig(process.env, overrides(flags)) });

addClientCommands(program);
addRunCommands(program);
addEndpointCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof AppError) {
    console.error(`ifw: ${err.message}`);
  } else {
    createLogger({ logLevel: 'error' }).error({ err }, 'ifw failed');
  }
  process.exit(1);
});
