/**
 * The forms of the Users pages: each form's markup beside the body it sends (`FormBody`), so that a
 * field is added to both at once, and the cards they sit on. A refused or warned form is shown again
 * with what was typed, never a password.
 */
import { Type, type Static } from 'typebox';
import { FormBody, FormList, FormText, type ConsoleContext } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, fields, formError, statusBadge, time } from '../console/widgets.js';
import { PERMISSION_SET_NAMES } from '../auth/permission-sets.js';
import type { Application, User } from '../auth/model.js';

const SET_HELP: Readonly<Record<(typeof PERMISSION_SET_NAMES)[number], string>> = {
  'VENDOR IF ALL': 'bulk import requests, integrations, REST APIs and runs, the job queue; not users',
  'VENDOR IF STANDARD': 'REST API connections, endpoints and runs; reads integrations and tables',
  SUPER: 'everything, including users and applications',
};

export const enabledBadge = (enabled: boolean): Html => statusBadge(enabled ? 'Enabled' : 'Disabled');

const NO_SETS_WARNING = 'no-sets-warning';
/** Sent by "Save without permission sets" (beside the warning): the administrator means a user with none. */
const WITHOUT_SETS = 'withoutPermissionSets';
const WithoutSets = Type.Optional(Type.Literal('yes'));
/** Whether to warn rather than save: no permission set ticked, and saving without one not confirmed. */
export const warnsNoSets = (body: { permissionSets?: readonly string[]; withoutPermissionSets?: 'yes' }): boolean =>
  (body.permissionSets ?? []).length === 0 && body.withoutPermissionSets === undefined;

/**
 * Checkboxes of the permission sets, with what each allows; `warnNone` adds, under them, the warning
 * that a user without any set can open nothing (the form then offers to save without sets).
 */
function setChoices(selected: readonly string[], warnNone = false): Html {
  return html`<fieldset ${warnNone ? html` aria-describedby="${NO_SETS_WARNING}"` : ''}>
    <legend>Permission sets</legend>
    ${PERMISSION_SET_NAMES.map((name) =>
      field({
        kind: 'checkbox',
        name: 'permissionSets',
        id: `set-${name.replace(/\s+/g, '-')}`,
        value: name,
        checked: selected.includes(name),
        label: name,
        help: SET_HELP[name],
        className: 'check',
      }),
    )}
    ${
      warnNone
        ? html`<p class="warning" role="alert" id="${NO_SETS_WARNING}">
            This user will be able to sign in but not open any page or call the API until a permission set is granted. Tick a set, or choose
            "Save without permission sets".
          </p>`
        : ''
    }
  </fieldset>`;
}

/** The submit button of a user's permission sets; after the warning, the one that saves none beside it. */
function setsButtons(label: string, warnNone: boolean): Html {
  const withoutSets = html`<button type="submit" class="secondary" name="${WITHOUT_SETS}" value="yes">
    Save without permission sets
  </button>`;
  return html`<button type="submit">${label}</button> ${warnNone ? withoutSets : ''}`;
}

export const NoFields = FormBody({});
export const NewUserBody = FormBody({
  userName: FormText(),
  password: FormText(),
  permissionSets: FormList(),
  [WITHOUT_SETS]: WithoutSets,
});
export const UserSetsBody = FormBody({ permissionSets: FormList(), [WITHOUT_SETS]: WithoutSets });
export const PasswordBody = FormBody({ password: FormText() });
export const ApplicationBody = FormBody({ issuer: FormText(), displayName: FormText(), permissionSets: FormList() });
export const NewApplicationBody = FormBody({
  clientId: FormText(),
  issuer: FormText(),
  displayName: FormText(),
  permissionSets: FormList(),
});

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

/** What a refused or warned form shows again: what was typed, never the password. */
export interface Shown<B> {
  readonly typed?: B;
  readonly error?: string;
  readonly warnNone?: boolean;
}

export function newUserForm(ctx: ConsoleContext, { typed, error, warnNone = false }: Shown<Static<typeof NewUserBody>> = {}): Html {
  return html`${formError(error)}
    <form method="post" action="/users/new" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        name: 'userName',
        label: 'User name',
        value: typed?.userName,
        required: true,
        maxlength: 64,
        help: "1 to 64 letters, digits, '.', '_', '@' or '-'; it cannot change later.",
      })}
      ${field({ ...PASSWORD, name: 'password', label: 'Password', help: 'At least 12 characters. Tell it to the user another way; it is never shown again.' })}
      ${setChoices(typed?.permissionSets ?? [], warnNone)} ${setsButtons('Create user', warnNone)}
    </form>`;
}

export function newApplicationForm(ctx: ConsoleContext, { typed, error }: Shown<Static<typeof NewApplicationBody>> = {}): Html {
  return html`${formError(error)}
    <form method="post" action="/applications/new" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        name: 'clientId',
        label: 'Client id',
        value: typed?.clientId,
        required: true,
        maxlength: 200,
        help: "The client id your identity provider puts in the application's tokens (azp, appid or client_id); it cannot change later.",
      })}
      ${applicationFields(typed?.issuer, typed?.displayName)} ${setChoices(typed?.permissionSets ?? [])}
      <button type="submit">Register application</button>
    </form>`;
}

export function userCard(
  user: User,
  ctx: ConsoleContext,
  { typed, error, warnNone = false }: Shown<Static<typeof UserSetsBody>> = {},
): Html {
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
      ${setChoices(typed === undefined ? user.permissionSets : (typed.permissionSets ?? []), warnNone)}
      ${setsButtons('Save permission sets', warnNone)}
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

export function applicationCard(application: Application, ctx: ConsoleContext, error?: string): Html {
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
