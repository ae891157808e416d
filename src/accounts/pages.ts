/**
 * The console's Users and applications, for SUPER (permission `administer`): the lists, a new user or
 * application, and a card for each where an administrator grants permission sets, disables or
 * enables, resets a user's password and deletes. The rules are the API's (`accounts.ts`): the same
 * validation and messages, and no change may leave the service without an enabled SUPER holder.
 * Passwords are write-only here as everywhere: no page ever shows one or its hash. A change of a
 * user's password, permission sets or enabled state ends their console sessions (console/sessions.ts),
 * here as through the API or the CLI.
 */
import { AppError } from '../core/errors.js';
import { FormBody, FormList, FormText, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, fields, formError, statusBadge, table, time } from '../console/widgets.js';
import { PERMISSION_SET_NAMES } from '../auth/permission-sets.js';
import type { Application, User } from '../auth/model.js';
import type { Accounts } from './accounts.js';

export interface AccountPagesDeps {
  readonly accounts: Accounts;
}

const SET_HELP: Readonly<Record<(typeof PERMISSION_SET_NAMES)[number], string>> = {
  'VENDOR IF ALL': 'bulk import requests, integrations, REST APIs and runs, the job queue; not users',
  'VENDOR IF STANDARD': 'REST API connections, endpoints and runs; reads integrations and tables',
  SUPER: 'everything, including users and applications',
};

const enabledBadge = (enabled: boolean): Html => statusBadge(enabled ? 'Enabled' : 'Disabled');

/** Checkboxes of the permission sets, with what each allows. */
function setChoices(selected: readonly string[], disabled = false): Html {
  return html`<fieldset>
    <legend>Permission sets</legend>
    ${PERMISSION_SET_NAMES.map((name) =>
      field({
        kind: 'checkbox',
        name: 'permissionSets',
        id: `set-${name.replace(/\s+/g, '-')}`,
        value: name,
        checked: selected.includes(name),
        disabled,
        label: name,
        help: SET_HELP[name],
        className: 'check',
      }),
    )}
  </fieldset>`;
}

/** Runs an account change; a refusal (4xx) comes back as its message for the page to show. */
async function attempt(change: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await change();
    return undefined;
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return err.message;
    throw err;
  }
}

const KeyParams = { params: PathKey('key') };
const NewUserBody = FormBody({ userName: FormText(), password: FormText(), permissionSets: FormList() });
const blankAsNull = (value: string | null): string | null => (value === null || value.trim() === '' ? null : value.trim());

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

const PASSWORD = { kind: 'password', autocomplete: 'new-password', required: true } as const;

/** The issuer and display name of an application, new or registered. */
function applicationFields(issuer: string | null | undefined, displayName: string | null | undefined): Html {
  return html`${field({
    name: 'issuer',
    label: 'Issuer',
    value: issuer,
    maxlength: 500,
    help: 'The issuer exactly as the application\'s tokens carry it in "iss". Left blank: the service\'s only issuer, if it trusts one.',
  })}
  ${field({ name: 'displayName', label: 'Display name', value: displayName, maxlength: 200 })}`;
}

function newUserForm(ctx: ConsoleContext, form?: URLSearchParams, error?: string): Html {
  return html`${formError(error)}
    <form method="post" action="/users/new" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        name: 'userName',
        label: 'User name',
        value: form?.get('userName'),
        required: true,
        maxlength: 64,
        help: "1 to 64 letters, digits, '.', '_', '@' or '-'; it cannot change later.",
      })}
      ${field({ ...PASSWORD, name: 'password', label: 'Password', help: 'At least 12 characters. Tell it to the user another way; it is never shown again.' })}
      ${setChoices(form?.getAll('permissionSets') ?? [])}
      <button type="submit">Create user</button>
    </form>`;
}

function newApplicationForm(ctx: ConsoleContext, form?: URLSearchParams, error?: string): Html {
  return html`${formError(error)}
    <form method="post" action="/applications/new" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        name: 'clientId',
        label: 'Client id',
        value: form?.get('clientId'),
        required: true,
        maxlength: 200,
        help: "The client id your identity provider puts in the application's tokens (azp, appid or client_id); it cannot change later.",
      })}
      ${applicationFields(form?.get('issuer'), form?.get('displayName'))} ${setChoices(form?.getAll('permissionSets') ?? [])}
      <button type="submit">Register application</button>
    </form>`;
}

function userCard(user: User, ctx: ConsoleContext, error?: string): Html {
  const base = path(['users', user.userName]);
  const self = user.userName === ctx.user.name;
  return html`${formError(error)}
    ${fields([
      ['User name', user.userName],
      ['Status', enabledBadge(user.enabled)],
      ['Created', time(user.createdAt)],
      ['Changed', time(user.updatedAt)],
      ['Password changed', time(user.passwordChangedAt)],
      ['Password', 'set (never shown)'],
    ])}
    <h2>Permission sets</h2>
    <form method="post" action="${base}/permission-sets" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${setChoices(user.permissionSets)}
      <button type="submit">Save permission sets</button>
    </form>
    <h2>Reset password</h2>
    <form method="post" action="${base}/password" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        ...PASSWORD,
        name: 'password',
        id: 'newPassword',
        label: 'New password',
        help: `At least 12 characters. ${self ? 'Every console session of yours ends, this one too: sign in again with the new password.' : 'The user is signed out of the console everywhere.'}`,
      })}
      <button type="submit">Reset password</button>
    </form>
    <h2>Access</h2>
    <p>
      ${
        user.enabled
          ? actionButton({
              action: `${base}/disable`,
              label: 'Disable',
              csrfToken: ctx.csrfToken,
              danger: true,
              confirm: `Disable ${user.userName}? They can no longer sign in or call the API, and are signed out now.`,
            })
          : actionButton({ action: `${base}/enable`, label: 'Enable', csrfToken: ctx.csrfToken })
      }
      ${actionButton({
        action: `${base}/delete`,
        label: 'Delete user',
        csrfToken: ctx.csrfToken,
        danger: true,
        confirm: `Delete ${user.userName}? This cannot be undone.`,
      })}
    </p>`;
}

function applicationCard(application: Application, ctx: ConsoleContext, error?: string): Html {
  const base = path(['applications', application.clientId]);
  return html`${formError(error)}
    ${fields([
      ['Client id', application.clientId],
      ['Issuer', application.issuer ?? 'not bound (accepted while the service trusts one issuer)'],
      ['Status', enabledBadge(application.enabled)],
      ['Created', time(application.createdAt)],
      ['Changed', time(application.updatedAt)],
    ])}
    <form method="post" action="${base}" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${applicationFields(application.issuer, application.displayName)} ${setChoices(application.permissionSets)}
      <button type="submit">Save</button>
    </form>
    <h2>Access</h2>
    <p>
      ${
        application.enabled
          ? actionButton({
              action: `${base}/disable`,
              label: 'Disable',
              csrfToken: ctx.csrfToken,
              danger: true,
              confirm: `Disable ${application.clientId}? Its tokens are refused from now on.`,
            })
          : actionButton({ action: `${base}/enable`, label: 'Enable', csrfToken: ctx.csrfToken })
      }
      ${actionButton({
        action: `${base}/delete`,
        label: 'Delete application',
        csrfToken: ctx.csrfToken,
        danger: true,
        confirm: `Delete ${application.clientId}? This cannot be undone.`,
      })}
    </p>`;
}

export function accountPages(deps: AccountPagesDeps): ConsolePages {
  const { accounts } = deps;

  async function showUser(ctx: ConsoleContext, userName: string, error?: string) {
    const user = await accounts.getUser(userName);
    return ctx.page(`User ${user.userName}`, userCard(user, ctx, error));
  }

  async function showApplication(ctx: ConsoleContext, clientId: string, error?: string) {
    const application = await accounts.getApplication(clientId);
    return ctx.page(`Application ${application.clientId}`, applicationCard(application, ctx, error));
  }

  return (router) => {
    router.section({ label: 'Users', href: '/users', permission: 'administer', order: 90 });

    router.get('/users', 'administer', async (_request, ctx) =>
      ctx.page('Users and applications', lists(await accounts.listUsers(), await accounts.listApplications())),
    );

    router.get('/users/new', 'administer', (_request, ctx) => Promise.resolve(ctx.page('New user', newUserForm(ctx))));

    router.post(
      '/users/new',
      'administer',
      async (request, ctx, form) => {
        const { userName, password, permissionSets = [] } = request.body;
        const error = await attempt(() => accounts.createUser({ userName, password, permissionSets }));
        if (error !== undefined) return ctx.page('New user', newUserForm(ctx, form, error));
        return redirect(path(['users', userName]), { kind: 'info', text: `User ${userName} created.` });
      },
      { body: NewUserBody },
    );

    router.get('/users/:key', 'administer', async (request, ctx) => showUser(ctx, request.params.key), KeyParams);

    router.post(
      '/users/:key/permission-sets',
      'administer',
      async (request, ctx, form) => {
        const userName = request.params.key;
        const error = await attempt(() => accounts.changeUser(userName, { permissionSets: form.getAll('permissionSets') }));
        if (error !== undefined) return showUser(ctx, userName, error);
        if (userName === ctx.user.name) return redirect('/login', { kind: 'info', text: 'Permission sets saved; sign in again.' });
        return redirect(path(['users', userName]), {
          kind: 'info',
          text: `Permission sets saved; ${userName} was signed out of the console.`,
        });
      },
      KeyParams,
    );

    router.post(
      '/users/:key/password',
      'administer',
      async (request, ctx, form) => {
        const userName = request.params.key;
        const error = await attempt(() => accounts.changeUser(userName, { password: form.get('password') ?? '' }));
        if (error !== undefined) return showUser(ctx, userName, error);
        if (userName === ctx.user.name) return redirect('/login', { kind: 'info', text: 'Password reset; sign in with the new one.' });
        return redirect(path(['users', userName]), { kind: 'info', text: `Password of ${userName} reset; their console sessions ended.` });
      },
      KeyParams,
    );

    for (const [verb, enabled] of [
      ['disable', false],
      ['enable', true],
    ] as const) {
      router.post(
        `/users/:key/${verb}`,
        'administer',
        async (request, ctx) => {
          const userName = request.params.key;
          const error = await attempt(() => accounts.changeUser(userName, { enabled }));
          if (error !== undefined) return showUser(ctx, userName, error);
          return redirect(path(['users', userName]), { kind: 'info', text: `${userName} is ${enabled ? 'enabled' : 'disabled'}.` });
        },
        KeyParams,
      );
      router.post(
        `/applications/:key/${verb}`,
        'administer',
        async (request, ctx) => {
          const clientId = request.params.key;
          const error = await attempt(() => accounts.changeApplication(clientId, { enabled }));
          if (error !== undefined) return showApplication(ctx, clientId, error);
          return redirect(path(['applications', clientId]), { kind: 'info', text: `${clientId} is ${enabled ? 'enabled' : 'disabled'}.` });
        },
        KeyParams,
      );
    }

    router.post(
      '/users/:key/delete',
      'administer',
      async (request, ctx) => {
        const userName = request.params.key;
        const error = await attempt(() => accounts.deleteUser(userName));
        if (error !== undefined) return showUser(ctx, userName, error);
        return redirect('/users', { kind: 'info', text: `User ${userName} deleted.` });
      },
      KeyParams,
    );

    router.get('/applications/new', 'administer', (_request, ctx) => Promise.resolve(ctx.page('New application', newApplicationForm(ctx))));

    router.post('/applications/new', 'administer', async (_request, ctx, form) => {
      const clientId = form.get('clientId') ?? '';
      const error = await attempt(() =>
        accounts.createApplication({
          clientId,
          issuer: blankAsNull(form.get('issuer')),
          displayName: form.get('displayName') ?? '',
          permissionSets: form.getAll('permissionSets'),
        }),
      );
      if (error !== undefined) return ctx.page('New application', newApplicationForm(ctx, form, error));
      return redirect(path(['applications', clientId]), { kind: 'info', text: `Application ${clientId} registered.` });
    });

    router.get('/applications/:key', 'administer', async (request, ctx) => showApplication(ctx, request.params.key), KeyParams);

    router.post(
      '/applications/:key',
      'administer',
      async (request, ctx, form) => {
        const clientId = request.params.key;
        const error = await attempt(() =>
          accounts.changeApplication(clientId, {
            // Blank leaves the issuer as it is: a bound application is never unbound by an empty field.
            ...(blankAsNull(form.get('issuer')) === null ? {} : { issuer: blankAsNull(form.get('issuer')) }),
            displayName: form.get('displayName') ?? '',
            permissionSets: form.getAll('permissionSets'),
          }),
        );
        if (error !== undefined) return showApplication(ctx, clientId, error);
        return redirect(path(['applications', clientId]), { kind: 'info', text: 'Application saved.' });
      },
      KeyParams,
    );

    router.post(
      '/applications/:key/delete',
      'administer',
      async (request, ctx) => {
        const clientId = request.params.key;
        const error = await attempt(() => accounts.deleteApplication(clientId));
        if (error !== undefined) return showApplication(ctx, clientId, error);
        return redirect('/users', { kind: 'info', text: `Application ${clientId} deleted.` });
      },
      KeyParams,
    );
  };
}
