/**
 * `ifw users …`, `ifw apps …` and `ifw token`: administering who may call the service, on the
 * configured database directly (no running service needed, so this is also the way back in when no
 * administrator can sign in). Changes reach a running service within a few seconds (its directory
 * cache). Passwords are read from stdin with `--password-stdin`, or generated and printed once;
 * never taken as a command-line argument, where other users of the machine could read them.
 */
import type { Command } from 'commander';
import { ConfigError, type Config } from '../core/config.js';
import { createAccounts, generatePassword, type Accounts } from '../accounts/accounts.js';
import { loadDevIssuer, trustedIssuerNames } from '../auth/dev-issuer.js';
import { parsePermissionSet, type PermissionSetName } from '../auth/permission-sets.js';
import { withWorld } from '../main/world.js';

export interface CommandContext {
  /** Adds --data-dir, --database-url and --log-level to a command. */
  readonly withDatabaseFlags: (cmd: Command) => Command;
  /** The configuration from the environment and a command's flags. */
  readonly configFrom: (flags: object) => Config;
}

function withAccounts<T>(config: Config, work: (accounts: Accounts) => Promise<T>): Promise<T> {
  // A running service may hold the write lock for a moment: wait for it instead of failing.
  return withWorld(config, { busyTimeoutMs: 10_000 }, (world) =>
    work(createAccounts(world.db, { clock: world.clock, issuers: trustedIssuerNames(config) })),
  );
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** The password from stdin, or a generated one (and whether it was generated, so it is printed). */
async function newPassword(fromStdin: boolean | undefined): Promise<{ password: string; generated: boolean }> {
  if (fromStdin === true) return { password: await readStdin(), generated: false };
  return { password: generatePassword(), generated: true };
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
const setList = (sets: string[] | undefined) => (sets ?? []).map((s) => parsePermissionSet(s));

/** What users and applications have in common: they are enabled or not, and hold permission sets. */
interface Holder {
  readonly noun: string;
  readonly argument: string;
  get(accounts: Accounts, key: string): Promise<{ readonly permissionSets: readonly PermissionSetName[] }>;
  change(accounts: Accounts, key: string, changes: { enabled?: boolean; permissionSets?: PermissionSetName[] }): Promise<unknown>;
}

/** `disable`, `enable`, `grant` and `revoke`, the same for users and applications. */
function holderCommands(group: Command, { withDatabaseFlags, configFrom }: CommandContext, holder: Holder): void {
  for (const [name, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    withDatabaseFlags(group.command(name).description(`${name} ${holder.noun}`).argument(holder.argument)).action(
      async (key: string, flags: object) => {
        print(await withAccounts(configFrom(flags), (a) => holder.change(a, key, { enabled })));
      },
    );
  }
  const setCommands = [
    ['grant', `give ${holder.noun} a permission set`, (held: readonly PermissionSetName[], set: PermissionSetName) => [...held, set]],
    [
      'revoke',
      `take a permission set from ${holder.noun}`,
      (held: readonly PermissionSetName[], set: PermissionSetName) => held.filter((s) => s !== set),
    ],
  ] as const;
  for (const [name, description, apply] of setCommands) {
    withDatabaseFlags(group.command(name).description(description).argument(holder.argument).argument('<permissionSet>')).action(
      async (key: string, set: string, flags: object) => {
        print(
          await withAccounts(configFrom(flags), async (a) => {
            const { permissionSets } = await holder.get(a, key);
            return holder.change(a, key, { permissionSets: apply(permissionSets, parsePermissionSet(set)) });
          }),
        );
      },
    );
  }
}

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
  holderCommands(users, context, {
    noun: 'a user',
    argument: '<userName>',
    get: (a, userName) => a.getUser(userName),
    change: (a, userName, changes) => a.changeUser(userName, changes),
  });

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
      .option('--issuer <iss>', "the issuer of its tokens, as in their 'iss' (default: the only issuer the service trusts)")
      .option('-p, --permission-set <set...>', "permission sets: 'VENDOR IF ALL', 'VENDOR IF STANDARD', SUPER"),
  ).action(async (clientId: string, flags: { name?: string; issuer?: string; permissionSet?: string[] }) => {
    const config = configFrom(flags);
    const sets = setList(flags.permissionSet);
    print(
      await withAccounts(config, (a) =>
        a.createApplication({
          clientId,
          permissionSets: sets,
          ...(flags.name === undefined ? {} : { displayName: flags.name }),
          ...(flags.issuer === undefined ? {} : { issuer: flags.issuer }),
        }),
      ),
    );
  });
  withDatabaseFlags(
    apps
      .command('set-issuer')
      .description("bind an application to the issuer of its tokens (as in their 'iss'): the same client id at another issuer is refused")
      .argument('<clientId>')
      .argument('<issuer>'),
  ).action(async (clientId: string, issuer: string, flags: object) => {
    print(await withAccounts(configFrom(flags), (a) => a.changeApplication(clientId, { issuer })));
  });
  holderCommands(apps, context, {
    noun: 'an application',
    argument: '<clientId>',
    get: (a, clientId) => a.getApplication(clientId),
    change: (a, clientId, changes) => a.changeApplication(clientId, changes),
  });

  withDatabaseFlags(
    program
      .command('token')
      .description('development only (IFW_DEV_TOKEN_ISSUER=true): print an access token for a registered application')
      .requiredOption('--app <clientId>', 'the application the token is for')
      .option('--minutes <n>', 'lifetime in minutes', '60'),
  ).action(async (flags: { app: string; minutes: string }) => {
    const config = configFrom(flags);
    if (!config.devTokenIssuer) {
      throw new ConfigError(
        'the development token issuer is off: set IFW_DEV_TOKEN_ISSUER=true (never in production) for this command and for the service',
      );
    }
    if (!/^\d{1,5}$/.test(flags.minutes) || Number(flags.minutes) < 1)
      throw new ConfigError(`--minutes must be a whole number of minutes, got "${flags.minutes}"`);
    const registered = await withAccounts(config, async (a) => (await a.listApplications()).find((app) => app.clientId === flags.app));
    if (registered === undefined)
      console.error(
        `ifw: warning: application '${flags.app}' is not registered; the service will refuse the token (ifw apps add ${flags.app})`,
      );
    else if (!registered.enabled) console.error(`ifw: warning: application '${flags.app}' is disabled; the service will refuse the token`);
    const issuer = await loadDevIssuer(config.dataDir);
    console.log(await issuer.sign(flags.app, { ttlSeconds: Number(flags.minutes) * 60 }));
  });
}
