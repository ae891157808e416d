/** The sign-in page: user name and password, the error of the last attempt, the page to return to. */
import { html, type Html } from './html.js';
import { field, formError } from './fields.js';
import { layout } from './layout.js';

export interface LoginPageOptions {
  readonly next: string;
  readonly error: string | undefined;
  readonly csrfToken: string;
  readonly userName: string;
}

export function loginPage(options: LoginPageOptions): Html {
  const { next, error, csrfToken, userName } = options;
  const body = html` ${formError(error, 'login-error')}
    <form method="post" action="/login" class="login" ${error === undefined ? '' : html` aria-describedby="login-error"`}>
      <input type="hidden" name="_csrf" value="${csrfToken}" />
      <input type="hidden" name="next" value="${next}" />
      ${field({ name: 'userName', label: 'User name', autocomplete: 'username', required: true, value: userName, autofocus: true })}
      ${field({ kind: 'password', name: 'password', label: 'Password', autocomplete: 'current-password', required: true })}
      <button type="submit">Sign in</button>
    </form>
    <p class="hint">
      Service users sign in here with the password they use for Basic authentication. Applications use the API with OAuth 2.0 tokens.
    </p>`;
  return layout({ title: 'Sign in', body });
}
