/**
 * `ifw users …`, `ifw apps …` and `ifw token`: administering who may call the service, on the
 * configured database directly (no running service needed, so this is also the way back in when no
 * administrator can sign in). Changes reach a running service within a few seconds (its directory
 * cache). Passwords are read from stdin with `--password-stdin`, or generated and printed once;
 * never taken as a command-line argument, where other users of the machine could read them.
 */
import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { ConfigError, type Config } from '../config.js';
import { createAccounts, generatePassword, type Accounts } from '../auth/accounts.js';
import { loadDevIssuer } from '../auth/dev-issuer.js';
import { parsePermissionSet } from '../auth/permission-sets.js';
import { migrate, openDatabase } from '../storage/database.js';

export interface CommandContext {
  /** Adds --data-dir, --database-url and --log-level to a command. */
  readonly withDatabaseFlags: (cmd: Command) => Command;
  /** The configuration from the environment and a command's flags. */
  readonly configFrom: (flags: object) => Config;
}

async function withAccounts<T>(config: Config, work: (accounts: Accounts) => Promise<T>): Promise<T> {
  // A running service may hold the write lock for a moment: wait for it instead of failing.
  const db = openDatabase(config.database, { busyTimeoutMs: 10_000 });
  try {
    await migrate(db);
    return await work(createAccounts(db.kysely, { clock: systemClock }));
  } finally {
    await db.close();
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** The password from stdin, or a generated one (and whether it was generated, so it is printed). */
async function newPassword(fromStdin: boolean | undefined): Promise<{ password: string; generated: boolean }> {
  if (fromStdin === true) return { password: await readStdin(), generated: false };
  return { password: generatePassword(), generated: true };
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
const setList = (sets: string[] | undefined) => (sets ?? []).map((s) => parsePermissionSet(s));

export function addSecurityCommands(program: Command, context: CommandContext): void {
  const { withDatabaseFlags, configFrom } = context;

  const users = program.command('users').description('service users (Basic authentication) and their permission sets');
  withDatabaseFlags(users.command('list').description('list users')).action(async (flags: object) => {
    print(await withAccounts(configFrom(flags), (a) => a.listUsers()));
  });
  withDatabaseFlags(
    users
      .command('add')
      .description('create a user; the password comes from stdin (--password-stdin) or is generated and printed once')
      .argument('<userName>')
      .option('-p, --permission-set <set...>', "permission sets: 'VENDOR IF ALL', 'VENDOR IF STANDARD', SUPER")
      .option('--password-stdin', 'read the password from stdin'),
  ).action(async (userName: string, flags: { permissionSet?: string[]; passwordStdin?: boolean }) => {
    const config = configFrom(flags);
    const sets = setList(flags.permissionSet);
    const { password, generated } = await newPassword(flags.passwordStdin);
    print(await withAccounts(config, (a) => a.createUser({ userName, password, permissionSets: sets })));
    if (generated) console.log(`password (shown only this once): ${password}`);
  });
  withDatabaseFlags(
    users
      .command('set-password')
      .description("change a user's password: from stdin (--password-stdin) or generated and printed once")
      .argument('<userName>')
      .option('--password-stdin', 'read the password from stdin'),
  ).action(async (userName: string, flags: { passwordStdin?: boolean }) => {
    const config = configFrom(flags);
    const { password, generated } = await newPassword(flags.passwordStdin);
    print(await withAccounts(config, (a) => a.changeUser(userName, { password })));
    if (generated) console.log(`password (shown only this once): ${password}`);
  });
  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    withDatabaseFlags(users.command(name).description(`${name} a user`).argument('<userName>')).action(async (userName: string, flags: object) => {
      print(await withAccounts(configFrom(flags), (a) => a.changeUser(userName, { enabled })));
    });
  }
  withDatabaseFlags(users.command('grant').description('give a user a permission set').argument('<userName>').argument('<permissionSet>')).action(
    async (userName: string, set: string, flags: object) => {
      print(
        await withAccounts(configFrom(flags), async (a) => {
          const user = await a.getUser(userName);
          return a.changeUser(userName, { permissionSets: [...user.permissionSets, parsePermissionSet(set)] });
        }),
      );
    },
  );
  withDatabaseFlags(users.command('revoke').description('take a permission set from a user').argument('<userName>').argument('<permissionSet>')).action(
    async (userName: string, set: string, flags: object) => {
      print(
        await withAccounts(configFrom(flags), async (a) => {
          const user = await a.getUser(userName);
          return a.changeUser(userName, { permissionSets: user.permissionSets.filter((s) => s !== parsePermissionSet(set)) });
        }),
      );
    },
  );

  const apps = program.command('apps').description('registered OAuth client applications and their permission sets');
  withDatabaseFlags(apps.command('list').description('list applications')).action(async (flags: object) => {
    print(await withAccounts(configFrom(flags), (a) => a.listApplications()));
  });
  withDatabaseFlags(
    apps
      .command('add')
      .description('register an application by the client id its tokens carry (azp, appid or client_id)')
      .argument('<clientId>')
      .option('--name <displayName>', 'a name people recognise')
      .option('-p, --permission-set <set...>', "permission sets: 'VENDOR IF ALL', 'VENDOR IF STANDARD', SUPER"),
  ).action(async (clientId: string, flags: { name?: string; permissionSet?: string[] }) => {
    const config = configFrom(flags);
    const sets = setList(flags.permissionSet);
    print(await withAccounts(config, (a) => a.createApplication({ clientId, permissionSets: sets, ...(flags.name === undefined ? {} : { displayName: flags.name }) })));
  });
  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    withDatabaseFlags(apps.command(name).description(`${name} an application`).argument('<clientId>')).action(async (clientId: string, flags: object) => {
      print(await withAccounts(configFrom(flags), (a) => a.changeApplication(clientId, { enabled })));
    });
  }
  withDatabaseFlags(apps.command('grant').description('give an application a permission set').argument('<clientId>').argument('<permissionSet>')).action(
    async (clientId: string, set: string, flags: object) => {
      print(
        await withAccounts(configFrom(flags), async (a) => {
          const application = await a.getApplication(clientId);
          return a.changeApplication(clientId, { permissionSets: [...application.permissionSets, parsePermissionSet(set)] });
        }),
      );
    },
  );
  withDatabaseFlags(apps.command('revoke').description('take a permission set from an application').argument('<clientId>').argument('<permissionSet>')).action(
    async (clientId: string, set: string, flags: object) => {
      print(
        await withAccounts(configFrom(flags), async (a) => {
          const application = await a.getApplication(clientId);
          return a.changeApplication(clientId, { permissionSets: application.permissionSets.filter((s) => s !== parsePermissionSet(set)) });
        }),
      );
    },
  );

  withDatabaseFlags(
    program
      .command('token')
      .description('development only (IFW_DEV_TOKEN_ISSUER=true): print an access token for a registered application')
      .requiredOption('--app <clientId>', 'the application the token is for')
      .option('--minutes <n>', 'lifetime in minutes', '60'),
  ).action(async (flags: { app: string; minutes: string }) => {
    const config = configFrom(flags);
    if (!config.devTokenIssuer) {
      throw new ConfigError('the development token issuer is off: set IFW_DEV_TOKEN_ISSUER=true (never in production) for this command and for the service');
    }
    if (!/^\d{1,5}$/.test(flags.minutes) || Number(flags.minutes) < 1) throw new ConfigError(`--minutes must be a whole number of minutes, got "${flags.minutes}"`);
    const registered = await withAccounts(config, async (a) => (await a.listApplications()).find((app) => app.clientId === flags.app));
    if (registered === undefined) console.error(`ifw: warning: application '${flags.app}' is not registered; the service will refuse the token (ifw apps add ${flags.app})`);
    else if (!registered.enabled) console.error(`ifw: warning: application '${flags.app}' is disabled; the service will refuse the token`);
    const issuer = await loadDevIssuer(config.dataDir);
    console.log(await issuer.sign(flags.app, { ttlSeconds: Number(flags.minutes) * 60 }));
  });
}
