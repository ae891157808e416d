/**
 * The console's Users and applications, for SUPER (permission `administer`): the lists, a new user or
 * application, and a card for each where an administrator grants permission sets, disables or
 * enables, resets a user's password and deletes. The rules are the API's (`accounts.ts`): the same
 * validation and messages, and no change may leave the service without an enabled SUPER holder.
 * Passwords are write-only here as everywhere: no page ever shows one or its hash. A change of a
 * user's password, permission sets or enabled state ends their console sessions (console/sessions.ts),
 * here as through the API or the CLI. Saving a user with no permission set asks first. The forms and
 * cards are in `forms.ts`.
 */
import type { Static } from 'typebox';
import { PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { table, time } from '../console/widgets.js';
import type { Application, User } from '../auth/model.js';
import type { Accounts } from './accounts.js';
import {
  ApplicationBody,
  applicationCard,
  enabledBadge,
  NewApplicationBody,
  newApplicationForm,
  NewUserBody,
  newUserForm,
  NoFields,
  PasswordBody,
  userCard,
  UserSetsBody,
  warnsNoSets,
  type Shown,
} from './forms.js';

export interface AccountPagesDeps {
  readonly accounts: Accounts;
}

const KeyParams = { params: PathKey('key') };
const blankAsNull = (value: string): string | null => (value.trim() === '' ? null : value.trim());

function lists(users: readonly User[], applications: readonly Application[]): Html {
  return html`<p>
      <a class="button" href="/users/new">New user</a>
      <a class="button" href="/applications/new">New application</a>
    </p>
    <h2>Users</h2>
    <p class="hint">People who sign in here or call the API with Basic authentication.</p>
    ${table({
      rows: users,
      columns: [
        { header: 'User name', cell: (u) => html`<a href="${path(['users', u.userName])}">${u.userName}</a>` },
        { header: 'Status', cell: (u) => enabledBadge(u.enabled) },
        { header: 'Permission sets', cell: (u) => u.permissionSets.join(', ') || '—' },
        { header: 'Password changed', cell: (u) => time(u.passwordChangedAt) },
      ],
    })}
    <h2>Applications</h2>
    <p class="hint">Systems that call the API with a bearer token; the client id is the one their tokens carry.</p>
    ${table({
      rows: applications,
      empty: 'No applications yet.',
      columns: [
        { header: 'Client id', cell: (a) => html`<a href="${path(['applications', a.clientId])}">${a.clientId}</a>` },
        { header: 'Display name', cell: (a) => a.displayName },
        { header: 'Status', cell: (a) => enabledBadge(a.enabled) },
        { header: 'Permission sets', cell: (a) => a.permissionSets.join(', ') || '—' },
      ],
    })}`;
}

export function accountPages(deps: AccountPagesDeps): ConsolePages {
  const { accounts } = deps;

  async function showUser(ctx: ConsoleContext, userName: string, shown?: Shown<Static<typeof UserSetsBody>>) {
    const user = await accounts.getUser(userName);
    return ctx.page(`User ${user.userName}`, userCard(user, ctx, shown));
  }

  async function showApplication(ctx: ConsoleContext, clientId: string, error?: string) {
    const application = await accounts.getApplication(clientId);
    return ctx.page(`Application ${application.clientId}`, applicationCard(application, ctx, error));
  }

  /** A refused change of a user's card: the card again, with the reason. */
  const userRefused = (request: { params: { key: string } }, ctx: ConsoleContext, error: string) =>
    showUser(ctx, request.params.key, { error });
  const applicationRefused = (request: { params: { key: string } }, ctx: ConsoleContext, error: string) =>
    showApplication(ctx, request.params.key, error);

  return (router) => {
    router.section({ label: 'Users', href: '/users', permission: 'administer', order: 90 });

    router.get('/users', 'administer', async (_request, ctx) =>
      ctx.page('Users and applications', lists(await accounts.listUsers(), await accounts.listApplications())),
    );

    router.get('/users/new', 'administer', (_request, ctx) => Promise.resolve(ctx.page('New user', newUserForm(ctx))));

    router.action(
      '/users/new',
      'administer',
      {
        change: async ({ body }, ctx) => {
          if (warnsNoSets(body)) return ctx.page('New user', newUserForm(ctx, { typed: body, warnNone: true }));
          const { userName, password, permissionSets = [] } = body;
          await accounts.createUser({ userName, password, permissionSets });
          return redirect(path(['users', userName]), { kind: 'info', text: `User ${userName} created.` });
        },
        refused: ({ body }, ctx, error) => ctx.page('New user', newUserForm(ctx, { typed: body, error })),
      },
      { body: NewUserBody },
    );

    router.get('/users/:key', 'administer', async (request, ctx) => showUser(ctx, request.params.key), KeyParams);

    router.action(
      '/users/:key/permission-sets',
      'administer',
      {
        change: async ({ params: { key: userName }, body }, ctx) => {
          if (warnsNoSets(body)) return showUser(ctx, userName, { typed: body, warnNone: true });
          await accounts.changeUser(userName, { permissionSets: body.permissionSets ?? [] });
          if (userName === ctx.user.name) return redirect('/login', { kind: 'info', text: 'Permission sets saved; sign in again.' });
          return redirect(path(['users', userName]), {
            kind: 'info',
            text: `Permission sets saved; ${userName} was signed out of the console.`,
          });
        },
        refused: userRefused,
      },
      { ...KeyParams, body: UserSetsBody },
    );

    router.action(
      '/users/:key/password',
      'administer',
      {
        change: async ({ params: { key: userName }, body }, ctx) => {
          await accounts.changeUser(userName, { password: body.password });
          if (userName === ctx.user.name) return redirect('/login', { kind: 'info', text: 'Password reset; sign in with the new one.' });
          return redirect(path(['users', userName]), {
            kind: 'info',
            text: `Password of ${userName} reset; their console sessions ended.`,
          });
        },
        refused: userRefused,
      },
      { ...KeyParams, body: PasswordBody },
    );

    for (const [verb, enabled] of [
      ['disable', false],
      ['enable', true],
    ] as const) {
      router.action(
        `/users/:key/${verb}`,
        'administer',
        {
          change: async ({ params: { key: userName } }) => {
            await accounts.changeUser(userName, { enabled });
            return redirect(path(['users', userName]), { kind: 'info', text: `${userName} is ${enabled ? 'enabled' : 'disabled'}.` });
          },
          refused: userRefused,
        },
        { ...KeyParams, body: NoFields },
      );
      router.action(
        `/applications/:key/${verb}`,
        'administer',
        {
          change: async ({ params: { key: clientId } }) => {
            await accounts.changeApplication(clientId, { enabled });
            return redirect(path(['applications', clientId]), {
              kind: 'info',
              text: `${clientId} is ${enabled ? 'enabled' : 'disabled'}.`,
            });
          },
          refused: applicationRefused,
        },
        { ...KeyParams, body: NoFields },
      );
    }

    router.action(
      '/users/:key/delete',
      'administer',
      {
        change: async ({ params: { key: userName } }) => {
          await accounts.deleteUser(userName);
          return redirect('/users', { kind: 'info', text: `User ${userName} deleted.` });
        },
        refused: userRefused,
      },
      { ...KeyParams, body: NoFields },
    );

    router.get('/applications/new', 'administer', (_request, ctx) => Promise.resolve(ctx.page('New application', newApplicationForm(ctx))));

    router.action(
      '/applications/new',
      'administer',
      {
        change: async ({ body }) => {
          const { clientId, issuer, displayName, permissionSets = [] } = body;
          await accounts.createApplication({ clientId, issuer: blankAsNull(issuer), displayName, permissionSets });
          return redirect(path(['applications', clientId]), { kind: 'info', text: `Application ${clientId} registered.` });
        },
        refused: ({ body }, ctx, error) => ctx.page('New application', newApplicationForm(ctx, { typed: body, error })),
      },
      { body: NewApplicationBody },
    );

    router.get('/applications/:key', 'administer', async (request, ctx) => showApplication(ctx, request.params.key), KeyParams);

    router.action(
      '/applications/:key',
      'administer',
      {
        change: async ({ params: { key: clientId }, body }) => {
          const issuer = blankAsNull(body.issuer);
          await accounts.changeApplication(clientId, {
            // Blank leaves the issuer as it is: a bound application is never unbound by an empty field.
            ...(issuer === null ? {} : { issuer }),
            displayName: body.displayName,
            permissionSets: body.permissionSets ?? [],
          });
          return redirect(path(['applications', clientId]), { kind: 'info', text: 'Application saved.' });
        },
        refused: applicationRefused,
      },
      { ...KeyParams, body: ApplicationBody },
    );

    router.action(
      '/applications/:key/delete',
      'administer',
      {
        change: async ({ params: { key: clientId } }) => {
          await accounts.deleteApplication(clientId);
          return redirect('/users', { kind: 'info', text: `Application ${clientId} deleted.` });
        },
        refused: applicationRefused,
      },
      { ...KeyParams, body: NoFields },
    );
  };
}
