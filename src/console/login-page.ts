/** The sign-in page: user name and password, the error of the last attempt, the page to return to. */
import { html, type Html } from './html.js';
import { layout } from './layout.js';

export interface LoginPageOptions {
  readonly next: string;
  readonly error: string | undefined;
  readonly csrfToken: string;
  readonly userName: string;
}

export function loginPage(options: LoginPageOptions): Html {
  const { next, error, csrfToken, userName } = options;
  const body = html` ${error === undefined ? '' : html`<div class="flash error" role="alert" id="login-error">${error}</div>`}
    <form method="post" action="/login" class="login" ${error === undefined ? '' : html` aria-describedby="login-error"`}>
      <input type="hidden" name="_csrf" value="${csrfToken}" />
      <input type="hidden" name="next" value="${next}" />
      <div class="field">
        <label for="userName">User name</label>
        <input id="userName" name="userName" autocomplete="username" required value="${userName}" autofocus />
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
      </div>
      <button type="submit">Sign in</button>
    </form>
    <p class="hint">
      Service users sign in here with the password they use for Basic authentication. Applications use the API with OAuth 2.0 tokens.
    </p>`;
  return layout({ title: 'Sign in', body });
}
