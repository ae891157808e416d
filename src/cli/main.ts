/**
 * The `ifw` command. Server commands (serve, migrate, apply) work on the configured database;
 * client commands (submit, status) talk to a running service over HTTP.
 */
import { Command, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { ConfigError, loadConfig, type ConfigOverrides } from '../core/config.js';
import { AppError } from '../core/errors.js';
import { applyConfigFile } from '../declarative-config/apply.js';
import { createLogger } from '../core/logger.js';
import { startWorker } from '../main/job-queue.js';
import { runEndpointOnce } from '../main/run-endpoint.js';
import { createService } from '../main/service.js';
import { withWorld } from '../main/world.js';
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

function baseUrl(flag: string | undefined): string {
  if (flag !== undefined) return flag.replace(/\/$/, '');
  if (process.env.IFW_URL) return process.env.IFW_URL.replace(/\/$/, '');
  const config = loadConfig();
  return `http://${config.host}:${config.port}`;
}

const API = '/api/vendor/integrationFramework/v1.0';

/** Credentials for client commands: IFW_TOKEN (a bearer token), or IFW_USER and IFW_PASSWORD (Basic). */
function authorization(): Record<string, string> {
  const { IFW_TOKEN: token, IFW_USER: user, IFW_PASSWORD: password } = process.env;
  if (token !== undefined && token !== '') return { authorization: `Bearer ${token}` };
  if (user !== undefined && user !== '') return { authorization: `Basic ${Buffer.from(`${user}:${password ?? ''}`).toString('base64')}` };
  return {};
}

async function http(method: string, url: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { ...authorization(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new ConfigError(`cannot reach the service at ${new URL(url).origin} (${cause}); is it running? (--url or IFW_URL)`);
  }
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, json };
}

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

program
  .command('submit')
  .description('submit a payload to a running service (POST bulkImportRequests)')
  .requiredOption('-i, --integration <sortingOrder>', 'integration Sorting Order')
  .requiredOption('-f, --file <file>', 'file holding the JSON payload')
  .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
  .addHelpText('after', '\nCredentials: IFW_TOKEN (bearer token), or IFW_USER and IFW_PASSWORD (Basic).')
  .option('--wait', 'poll until the request is Completed, Failed or Cancelled')
  .action(async (flags: { integration: string; file: string; url?: string; wait?: boolean }) => {
    const base = baseUrl(flags.url);
    const payload = await readFile(flags.file, 'utf8');
    const submitted = await http('POST', `${base}${API}/bulkImportRequests`, {
      integrationSortingOrder: Number(flags.integration),
      payload,
    });
    console.log(JSON.stringify(submitted.json, null, 2));
    if (submitted.status !== 202) process.exit(1);
    if (flags.wait !== true) return;
    const { requestId } = submitted.json as { requestId: string };
    for (let delay = 100; ; delay = Math.min(delay * 2, 5000)) {
      await new Promise((r) => setTimeout(r, delay));
      const polled = await http('GET', `${base}${API}/bulkImportRequests(${requestId})`);
      // A refusal (credentials no longer valid, throttled, not found) does not go away by polling again.
      if (polled.status >= 400 && polled.status < 500) {
        console.log(JSON.stringify(polled.json, null, 2));
        process.exit(1);
      }
      const status = (polled.json as { status?: string }).status;
      if (status === 'Completed' || status === 'Failed' || status === 'Cancelled') {
        console.log(JSON.stringify(polled.json, null, 2));
        if (status !== 'Completed') process.exit(1);
        return;
      }
    }
  });

program
  .command('status')
  .description('show a bulk import request of a running service')
  .argument('<requestId>')
  .option('--url <url>', 'service base URL (IFW_URL, default http://IFW_HOST:IFW_PORT)')
  .option('--details', 'show counts and per-record errors')
  .action(async (requestId: string, flags: { url?: string; details?: boolean }) => {
    const polled = await http(
      'GET',
      `${baseUrl(flags.url)}${API}/bulkImportRequests(${requestId})${flags.details === true ? '/details' : ''}`,
    );
    console.log(JSON.stringify(polled.json, null, 2));
    if (polled.status !== 200) process.exit(1);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof AppError) {
    console.error(`ifw: ${err.message}`);
  } else {
    createLogger({ logLevel: 'error' }).error({ err }, 'ifw failed');
  }
  process.exit(1);
});
