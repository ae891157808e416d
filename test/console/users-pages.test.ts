/**
 * The Users pages over real sockets: saving a user with no permission set warns first (the form again,
 * the warning under the permission sets, "Save without permission sets" beside the button), and a
 * change the rules refuse shows the card again with the rules' words, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formAsSent, signInHttp, type Browserless } from '../helpers/console-http.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'console-users-pages-1';
const WARNING = /This user will be able to sign in but not open any page/;
const SAVE_WITHOUT = 'Save without permission sets';

let t: TestService;
let base: string;
let admin: Browserless;

beforeAll(async () => {
  t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
  base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  await t.service.accounts.createUser({ userName: 'users-admin', password: PASSWORD, permissionSets: ['SUPER'] });
  admin = await signInHttp(base, 'users-admin', PASSWORD);
});
afterAll(async () => {
  await t?.cleanup();
});

const userNames = async () =>
  (JSON.parse((await t.inject({ method: 'GET', url: `${API}/users` })).body) as { value: { userName: string }[] }).value.map(
    (u) => u.userName,
  );
const userOf = async (userName: string) =>
  JSON.parse((await t.inject({ method: 'GET', url: `${API}/users('${userName}')` })).body) as {
    permissionSets: string[];
    passwordChangedAt: string;
  };
const post = (action: string, fields: [string, string][]) => admin.post(action, Object.fromEntries([['_csrf', admin.csrf], ...fields]));
/** Posts fields with repeated names, as a form's checkboxes send them. */
async function postAll(action: string, fields: [string, string][]) {
  const answer = await fetch(`${base}${action}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie, origin: base },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: answer.status, location: answer.headers.get('location'), text: await answer.text() };
}

describe('a new user with no permission set', () => {
  it('is not saved: the form comes back with the warning under the permission sets and what was typed', async () => {
    const answer = await post('/users/new', [
      ['userName', 'no-sets'],
      ['password', 'no-sets-password-1'],
    ]);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(WARNING);
    expect(answer.text).toMatch(/aria-describedby="no-sets-warning"/);
    // Under the permission sets: inside their fieldset, after the last box.
    expect(answer.text).toMatch(/<legend>Permission sets<\/legend>[\s\S]*id="set-SUPER"[\s\S]*This user will be able[\s\S]*<\/fieldset>/);
    expect(answer.text).toContain(SAVE_WITHOUT);
    expect(answer.text).toMatch(/name="userName"[^>]*value="no-sets"/);
    expect(answer.text).not.toContain('no-sets-password-1');
    expect(await userNames()).not.toContain('no-sets');
  });

  it('is warned again when "Create user" is pressed with still no set ticked', async () => {
    const warned = await post('/users/new', [
      ['userName', 'no-sets'],
      ['password', 'no-sets-password-1'],
    ]);
    const again = formAsSent(warned.text, '/users/new', { fill: { password: 'no-sets-password-1' }, press: 'Create user' });
    const answer = await postAll('/users/new', again);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(WARNING);
    expect(await userNames()).not.toContain('no-sets');
  });

  it('is saved with none by "Save without permission sets" on the warned form', async () => {
    const warned = await post('/users/new', [
      ['userName', 'no-sets'],
      ['password', 'no-sets-password-1'],
    ]);
    const confirmed = formAsSent(warned.text, '/users/new', { fill: { password: 'no-sets-password-1' }, press: SAVE_WITHOUT });
    const answer = await postAll('/users/new', confirmed);
    expect([answer.status, answer.location]).toEqual([303, '/users/no-sets']);
    expect((await userOf('no-sets')).permissionSets).toEqual([]);
  });

  it('is saved with the sets ticked on the warned form, whichever button is pressed', async () => {
    const warned = await post('/users/new', [
      ['userName', 'ticked-after'],
      ['password', 'ticked-after-password'],
    ]);
    const ticked = formAsSent(warned.text, '/users/new', {
      fill: { password: 'ticked-after-password' },
      tick: ['VENDOR IF ALL'],
      press: SAVE_WITHOUT,
    });
    expect((await postAll('/users/new', ticked)).status).toBe(303);
    expect((await userOf('ticked-after')).permissionSets).toEqual(['VENDOR IF ALL']);
  });

  it('gets no warning on a form that has not been warned, and none when a set is ticked', async () => {
    const page = await admin.get('/users/new');
    expect(page.text).not.toMatch(WARNING);
    expect(page.text).not.toContain(SAVE_WITHOUT);
    const answer = await post('/users/new', [
      ['userName', 'with-a-set'],
      ['password', 'with-a-set-password'],
      ['permissionSets', 'VENDOR IF STANDARD'],
    ]);
    expect([answer.status, answer.headers.get('location')]).toEqual([303, '/users/with-a-set']);
  });
});

describe("a user's permission sets, all unticked", () => {
  it('are not saved: the card comes back with the warning, the boxes as sent', async () => {
    await t.service.accounts.createUser({ userName: 'losing-sets', password: 'losing-sets-password', permissionSets: ['VENDOR IF ALL'] });
    const page = await admin.get('/users/losing-sets');
    const unticked = formAsSent(page.text, '/users/losing-sets/permission-sets').filter(([name]) => name !== 'permissionSets');
    const answer = await postAll('/users/losing-sets/permission-sets', unticked);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(WARNING);
    expect(answer.text).not.toMatch(/id="set-VENDOR-IF-ALL"[^>]*checked/);
    expect((await userOf('losing-sets')).permissionSets).toEqual(['VENDOR IF ALL']);

    const confirmed = formAsSent(answer.text, '/users/losing-sets/permission-sets', { press: SAVE_WITHOUT });
    const saved = await postAll('/users/losing-sets/permission-sets', confirmed);
    expect([saved.status, saved.location]).toEqual([303, '/users/losing-sets']);
    expect((await userOf('losing-sets')).permissionSets).toEqual([]);
  });
});

describe('a change the rules refuse', () => {
  it("shows the user's card again with the rules' words, and changes nothing", async () => {
    await t.service.accounts.createUser({ userName: 'short-pass', password: 'short-pass-password', permissionSets: ['VENDOR IF ALL'] });
    const before = await userOf('short-pass');
    const answer = await post('/users/short-pass/password', [['password', 'short']]);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/<h1[^>]*>User short-pass<\/h1>/);
    expect(answer.text).toMatch(/at least 12/i);
    expect(await userOf('short-pass')).toEqual(before);
  });

  it('shows the new user form again with what was typed and the reason', async () => {
    const answer = await post('/users/new', [
      ['userName', 'bad name!'],
      ['password', 'bad-name-password-1'],
      ['permissionSets', 'SUPER'],
    ]);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/role="alert"/);
    expect(answer.text).toMatch(/name="userName"[^>]*value="bad name!"/);
    expect(answer.text).toMatch(/id="set-SUPER"[^>]*checked/);
    expect(await userNames()).not.toContain('bad name!');
  });
});
