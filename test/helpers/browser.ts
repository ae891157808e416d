/**
 * Browser tests of the admin console: Debian's chromium driven by playwright-core (never a browser
 * download), against a real service listening on 127.0.0.1 port 0 with a real SQLite file. Each test
 * saves screenshots under test-output/screenshots/ and checks its pages with axe-core.
 *
 * Without chromium the browser tests fail, as they do everywhere (`.ci/run` installs it), unless
 * IFW_TEST_SKIP_BROWSER=1 asks to skip them on a machine without it, with a printed notice.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { PermissionSetName } from '../../src/auth/permission-sets.js';
import type { Config } from '../../src/core/config.js';
import { startTestService, type TestService } from './service.js';

export const CHROMIUM = process.env.IFW_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-output/screenshots');
export const PASSWORD = 'console-test-password-1';

/** Whether browser tests run here: a missing chromium is an error unless IFW_TEST_SKIP_BROWSER=1 asks to skip them. */
export function browserAvailable(): boolean {
  if (process.env.IFW_TEST_SKIP_BROWSER === '1') {
    console.warn('IFW_TEST_SKIP_BROWSER=1: the console browser tests are skipped.');
    return false;
  }
  if (fs.existsSync(CHROMIUM)) return true;
  throw new Error(
    `chromium is missing at ${CHROMIUM}; install it (apt-get install -y chromium), or set IFW_TEST_SKIP_BROWSER=1 to skip the browser tests on this machine`,
  );
}

export interface ConsoleFixture {
  readonly t: TestService;
  readonly base: string;
  readonly browser: Browser;
  /** A user name holding `set`, with PASSWORD; created on first use. */
  user(set: PermissionSetName): Promise<string>;
  /** A fresh browser context, signed in as a user holding `set`. */
  signedIn(set: PermissionSetName): Promise<Page>;
  close(): Promise<void>;
}

export async function startConsole(options: { workers?: boolean; config?: Partial<Config> } = {}): Promise<ConsoleFixture> {
  const t = await startTestService({ workers: options.workers ?? false, config: { host: '127.0.0.1', port: 0, ...options.config } });
  const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const users = new Map<PermissionSetName, string>();
  const fixture: ConsoleFixture = {
    t,
    base,
    browser,
    async user(set) {
      let name = users.get(set);
      if (name === undefined) {
        name = `ui-${set.toLowerCase().replace(/ /g, '-')}`;
        await t.service.accounts.createUser({ userName: name, password: PASSWORD, permissionSets: [set] });
        users.set(set, name);
      }
      return name;
    },
    async signedIn(set) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await signIn(page, base, await fixture.user(set), PASSWORD);
      return page;
    },
    async close() {
      await browser.close();
      await t.cleanup();
    },
  };
  return fixture;
}

export async function signIn(page: Page, base: string, userName: string, password: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.getByLabel('User name').fill(userName);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/login')), page.getByRole('button', { name: 'Sign in' }).click()]);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** axe-core's source: evaluated in the page (a script tag would be an inline script, which the console's CSP refuses). */
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: unknown[];
}

/** axe-core in the page: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  await page.evaluate(AXE);
  // A string, so that this file needs no DOM types: it runs in the page.
  const violations = await page.evaluate<AxeViolation[]>(`axe.run().then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target) })))`);
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

/** Every link, button and form control of the page can take the keyboard focus (none has tabindex=-1 or is hidden from it). */
export async function expectKeyboardReachable(page: Page): Promise<void> {
  const unreachable = await page.evaluate<string[]>(`Array.from(document.querySelectorAll(
    'a[href], button:not([disabled]), input:not([type=hidden]), select, textarea'))
    .filter((el) => el.tabIndex < 0).map((el) => el.outerHTML.slice(0, 120))`);
  expect(unreachable).toEqual([]);
}
