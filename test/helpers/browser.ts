// Browser tests of the web app: Debian's chromium driven by playwright-core against `reclib serve`
// from the bundle on a fresh database. One browser per test file; pages are reused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { cliJson, ROOT, startServe, type ServeProcess } from './bundle';
import { waitFor } from './wait';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENS = path.join(ROOT, 'test/output/screens');

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`the browser tests need chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH to another Chromium binary`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface WebServer {
  serve: ServeProcess;
  db: string;
  url: string;
  accountId: string;
  password: string;
  /** A session token for seeding through the API. */
  token: string;
  /** JSON API call with the seeding session (Bearer, so no Origin is needed). */
  api: (method: string, p: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; json: any; headers: Headers }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response shapes vary
  stop: () => Promise<void>;
}

/** Starts the server on a fresh database with one account (name `owner`) and a session for seeding. */
export async function startWebServer(args: string[] = []): Promise<WebServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-web-'));
  const db = path.join(dir, 'reclib.db');
  const password = 'correct horse battery';
  const created = await cliJson(['accounts', 'create', '--db', db, '--name', 'owner', '--password-stdin'], { input: `${password}\n` });
  const accountId: string = created.account.id;
  const serve = await startServe(['--db', db, ...args]);
  const session = await cliJson(['sessions', 'create', '--db', db, '--account', accountId]);
  const token: string = session.session.token;
  const api: WebServer['api'] = async (method, p, body, headers = {}) => {
    const res = await fetch(serve.url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : {}, headers: res.headers };
  };
  return {
    serve, db, url: serve.url, accountId, password, token, api,
    stop: async () => {
      await serve.stop('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A page that records every request that leaves the server's origin (none may: the app loads
 * nothing from elsewhere) and every console error.
 */
export async function openPage(browser: Browser, origin: string): Promise<{ context: BrowserContext; page: Page; foreign: string[]; consoleErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const foreign: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (req) => {
    if (new URL(req.url()).origin !== origin) foreign.push(req.url());
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(err.message));
  return { context, page, foreign, consoleErrors };
}

/** Full-page screenshots at desktop and phone widths: test/output/screens/<name>-1280.png, -375.png. */
export async function screens(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENS, { recursive: true });
  const before = page.viewportSize() ?? { width: 1280, height: 860 };
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: width === 375 ? 812 : 860 });
    await page.screenshot({ path: path.join(SCREENS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(before);
}

/** Signs in through the form. */
export async function signIn(page: Page, server: WebServer): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByLabel('Account').fill('owner');
  await page.getByLabel('Password').fill(server.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

let keySeq = 0;
/** Creates a recording through the v2 API (recordedAt in Unix ms). */
export async function createRecording(server: WebServer, body: Record<string, unknown>): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- the v2 recording shape
  const res = await server.api('POST', '/api/v2/recordings', body, { 'idempotency-key': `seed-${Date.now()}-${++keySeq}` });
  if (res.status !== 201) throw new Error(`seeding a recording failed: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json.recording;
}

/** Polls `check` until it holds (the page updates asynchronously); fails after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, what: string | (() => string), timeoutMs = 10_000): Promise<void> {
  await waitFor(check, what, { timeoutMs, everyMs: 25 });
}

/**
 * Runs `act` (which closes the open dialog) and returns the text of what had focus at the moment
 * the dialog left the page: a keyboard user's focus must be back on a control by then, not on the
 * body (and not only later, once some deferred work has run).
 */
export async function focusAsDialogLeaves(page: Page, act: () => Promise<void>): Promise<string | null> {
  await page.evaluate(`(() => {
    window.__focusAsDialogLeaves = undefined;
    const seen = new MutationObserver(() => {
      if (document.querySelector('dialog')) return;
      const a = document.activeElement;
      window.__focusAsDialogLeaves = a === document.body || !a ? null : a.textContent.trim();
      seen.disconnect();
    });
    seen.observe(document.body, { childList: true, subtree: true });
  })()`);
  await act();
  await waitUntil(async () => (await page.evaluate('window.__focusAsDialogLeaves')) !== undefined, 'the dialog leaves the page');
  return page.evaluate('window.__focusAsDialogLeaves') as Promise<string | null>;
}
