/**
 * The warning before saving a user with no permission set, in a real browser: the New user form and a
 * user's permission sets come back with the warning under the sets, and "Save without permission sets"
 * saves the user with none. No script runs for it: the warning is the server's answer to the form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserAvailable,
  expectAccessible,
  expectKeyboardReachable,
  screenshot,
  startConsole,
  type ConsoleFixture,
} from '../helpers/browser.js';

const available = browserAvailable();
const WARNING = /This user will be able to sign in but not open any page/;

describe.runIf(available)('admin console: a user with no permission set, in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole();
  });
  afterAll(async () => {
    await c?.close();
  });

  it('warns on New user with no set ticked, and saves the user with none once confirmed', async () => {
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/users/new`);
    await page.getByLabel('User name').fill('no.sets');
    await page.getByLabel('Password').fill('no-sets-password-1');
    await page.getByRole('button', { name: 'Create user' }).click();
    const warning = page.getByRole('group', { name: 'Permission sets' }).getByText(WARNING);
    await warning.waitFor();
    expect(await page.getByLabel('User name').inputValue()).toBe('no.sets');
    await expect(c.t.service.accounts.getUser('no.sets')).rejects.toMatchObject({ status: 404 });
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'new-user-no-permission-set');

    await page.getByLabel('Password').fill('no-sets-password-1');
    await page.getByRole('button', { name: 'Save without permission sets' }).click();
    await page.getByRole('status').getByText('User no.sets created.').waitFor();
    expect((await c.t.service.accounts.getUser('no.sets')).permissionSets).toEqual([]);
    await page.context().close();
  });

  it("warns when a user's last set is unticked, and saves none once confirmed", async () => {
    await c.t.service.accounts.createUser({ userName: 'losing.sets', password: 'losing-sets-password', permissionSets: ['VENDOR IF ALL'] });
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/users/losing.sets`);
    await page.getByLabel('VENDOR IF ALL').uncheck();
    await page.getByRole('button', { name: 'Save permission sets' }).click();
    await page.getByText(WARNING).waitFor();
    expect(await page.getByLabel('VENDOR IF ALL').isChecked()).toBe(false);
    expect((await c.t.service.accounts.getUser('losing.sets')).permissionSets).toEqual(['VENDOR IF ALL']);
    await page.getByRole('button', { name: 'Save without permission sets' }).click();
    await page.getByRole('status').getByText('Permission sets saved; losing.sets was signed out of the console.').waitFor();
    expect((await c.t.service.accounts.getUser('losing.sets')).permissionSets).toEqual([]);
    await page.context().close();
  });
});
