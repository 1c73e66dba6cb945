// The web app in a real browser (docs/decisions.md §8): sign-in, the library (search with marks,
// day groups, filters, Load more), the recording page (save with If-Match, the edit conflict,
// delete behind a dialog) and sign-out ending the session. Elements are found by role and label
// only, as the outside suite and screen readers find them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { cliJson } from '../../helpers/bundle';
import { createRecording, focusAsDialogLeaves, launchBrowser, openPage, screens, signIn, startWebServer, waitUntil, type WebServer } from '../../helpers/browser';

const DAY = 86_400_000;

describe('web app: sign-in, library and recording pages', () => {
  let server: WebServer;
  let browser: Browser;
  let page: Page;
  let foreign: string[];
  let consoleErrors: string[];
  const ids: Record<string, string> = {};
  let groceriesAt = 0;

  before(async () => {
    [server, browser] = await Promise.all([startWebServer(), launchBrowser()]);
    ({ page, foreign, consoleErrors } = await openPage(browser, server.url));
    const now = Date.now();
    // 32 older memos (more than one page of 30), then the recordings the tests look at.
    for (let i = 0; i < 32; i++) {
      await createRecording(server, { type: 'memo', title: `Archive note ${i + 1}`, transcript: `Filed away item number ${i + 1}.`, recordedAt: now - 20 * DAY - i * 60_000 });
    }
    ids.yesterday = (await createRecording(server, { type: 'memo', title: 'Budget review', transcript: 'We went through the café budget line by line.', recordedAt: now - DAY })).id;
    ids.meeting = (await createRecording(server, { type: 'clip', title: 'Meeting notes', transcript: 'The weekly meeting moved to Thursday. Remember the quarterly report.', recordedAt: now - 60_000 })).id;
    const groceries = await createRecording(server, { type: 'clip', title: 'Groceries', transcript: 'Buy apples, oat milk and coffee beans.', recordedAt: now - 30_000 });
    ids.pinned = groceries.id;
    groceriesAt = groceries.recordedAt;
    await server.api('PATCH', `/api/v2/recordings/${ids.pinned}`, { pinned: true }, { 'if-match': '1' });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('GET / without a session shows the sign-in form; a wrong password is an alert and the form stays', async () => {
    await page.goto(`${server.url}/`);
    await page.getByLabel('Account').waitFor();
    await screens(page, 'sign-in');
    await page.getByLabel('Account').fill('owner');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /wrong account or password/i);
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isVisible(), true);
    await screens(page, 'sign-in-failed');
  });

  it('signs in by account name and shows the library newest first, grouped by day, clip/memo and pin marked', async () => {
    await signIn(page, server);
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    for (const name of ['Library', 'Devices', 'API keys', 'Webhooks']) assert.equal(await page.getByRole('link', { name, exact: true }).count(), 1, name);
    const articles = page.getByRole('article');
    await articles.first().waitFor();
    assert.equal(await articles.count(), 30, 'one page of 30');
    assert.match(await articles.nth(0).innerText(), /Groceries[\s\S]*/);
    assert.match(await articles.nth(0).innerText(), /Clip/);
    assert.match(await articles.nth(0).innerText(), /Pinned/);
    assert.match(await articles.nth(1).innerText(), /Meeting notes/);
    assert.match(await articles.nth(2).innerText(), /Memo/);
    await page.getByRole('heading', { name: 'Today', level: 2 }).waitFor();
    await page.getByRole('heading', { name: 'Yesterday', level: 2 }).waitFor();
    await screens(page, 'library');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screens(page, 'library-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('every control is reached with Tab and shows a visible focus ring', async () => {
    await page.reload();
    await page.getByRole('article').first().waitFor();
    const focused = () => page.evaluate('[document.activeElement.tagName, document.activeElement.textContent.trim(), getComputedStyle(document.activeElement).outlineStyle]') as Promise<string[]>;
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press('Tab');
      const [tag, text, outline] = await focused();
      seen.push(`${tag}:${text}`);
      assert.notEqual(outline, 'none', `focus visible on ${tag} ${text}`);
    }
    for (const stop of ['A:Library', 'A:Devices', 'A:API keys', 'A:Webhooks', 'BUTTON:Sign out', 'INPUT:', 'SELECT:AllClipsMemos']) {
      assert.ok(seen.includes(stop), `${stop} in ${seen.join(', ')}`);
    }
  });

  it('Load more fetches the next page with the cursor and disappears on the last one', async () => {
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByRole('article').nth(34).waitFor();
    assert.equal(await page.getByRole('article').count(), 35);
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);
  });

  it('Back from a recording opened far down the list comes back to it: the pages loaded, scrolled where it was', async () => {
    const last = page.getByRole('article').filter({ hasText: 'Archive note 32' });
    await last.scrollIntoViewIfNeeded();
    const scrolled = (await page.evaluate('window.scrollY')) as number;
    assert.ok(scrolled > 300, `scrolled down (${scrolled})`);
    await last.getByRole('link').click();
    await page.getByLabel('Title').waitFor();
    await page.goBack();
    await page.getByRole('article').nth(34).waitFor();
    assert.equal(await page.getByRole('article').count(), 35, 'both pages, in one request');
    await waitUntil(async () => Math.abs(((await page.evaluate('window.scrollY')) as number) - scrolled) < 5, 'scrolled back');
    await page.evaluate('window.scrollTo(0, 0)');
  });

  it('"/" focuses the search; results follow typing, matched words marked by the API rules (prefix, accents, phrases)', async () => {
    await page.locator('body').click({ position: { x: 5, y: 400 } });
    await page.keyboard.press('/');
    const search = page.getByRole('searchbox', { name: 'Search' });
    assert.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'search');
    await page.keyboard.type('meet');
    await page.getByRole('article').filter({ hasText: 'Meeting notes' }).waitFor();
    await waitUntil(async () => (await page.getByRole('article').count()) === 1, 'one article is left');
    const marks = await page.getByRole('article').locator('mark').allInnerTexts();
    assert.deepEqual(marks, ['Meeting', 'meeting']);
    await screens(page, 'library-search');

    await search.fill('CAFE');
    await page.getByRole('article').filter({ hasText: 'Budget review' }).waitFor();
    assert.deepEqual(await page.getByRole('article').locator('mark').allInnerTexts(), ['café']);

    await search.fill('"quarterly report"');
    await page.getByRole('article').filter({ hasText: 'Meeting notes' }).waitFor();
    assert.deepEqual(await page.getByRole('article').locator('mark').allInnerTexts(), ['quarterly report']);

    await search.fill('zebra');
    await page.getByText('No recordings match.').waitFor();
    await screens(page, 'library-no-match');

    // Only emoji and punctuation: nothing to search for, and the page says so over the whole library.
    await search.fill('🎉 ?!');
    await page.getByText('“🎉 ?!” has no letters or numbers to search for, so every recording is shown.').waitFor();
    await page.getByRole('article').nth(29).waitFor();
    await screens(page, 'library-nothing-to-search');
    await search.fill('meet!');
    await waitUntil(async () => (await page.getByRole('article').count()) === 1, 'only Meeting notes is left');
    assert.equal(await page.getByText('has no letters or numbers').count(), 0);
    await search.fill('');
    await page.getByRole('article').nth(29).waitFor();
  });

  it('the Type filter shows only clips or only memos', async () => {
    await page.getByLabel('Type').selectOption({ label: 'Clips' });
    await waitUntil(async () => (await page.getByRole('article').count()) === 2, 'the two clips are left');
    assert.equal(await page.getByRole('article').filter({ hasText: 'Memo' }).count(), 0);
    await page.getByLabel('Type').selectOption({ label: 'Memos' });
    await page.getByRole('article').filter({ hasText: 'Budget review' }).waitFor();
    assert.equal(await page.getByRole('article').filter({ hasText: 'Groceries' }).count(), 0);
    await page.getByLabel('Type').selectOption({ label: 'All' });
    await page.getByRole('article').filter({ hasText: 'Groceries' }).waitFor();
  });

  it('the address carries the search and filters: a reload, a shared link and Back from a recording show the same results', async () => {
    const search = page.getByRole('searchbox', { name: 'Search' });
    const hashOf = () => new URL(page.url()).hash;
    await search.fill('meet');
    await waitUntil(async () => (await page.getByRole('article').count()) === 1, 'one article is left');
    await waitUntil(async () => hashOf() === '#/?q=meet', () => `the address shows the search (${hashOf()})`);
    const entries = (await page.evaluate('history.length')) as number;

    await page.reload();
    await page.getByRole('article').filter({ hasText: 'Meeting notes' }).waitFor();
    assert.equal(await search.inputValue(), 'meet');
    assert.equal(await page.getByRole('article').count(), 1);

    // The nav's Library link, on the library: no new history entry, the search stays.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Library' }).click();
    assert.equal(await page.evaluate('history.length'), entries);
    assert.equal(hashOf(), '#/?q=meet');

    await page.getByRole('article').getByRole('link').click();
    await page.getByLabel('Title').waitFor();
    await page.goBack();
    await page.getByRole('article').filter({ hasText: 'Meeting notes' }).waitFor();
    assert.equal(await search.inputValue(), 'meet');

    // A link someone shared (typed into the address bar while the library is open): its filters.
    await page.goto(`${server.url}/#/?type=clip&status=nonsense`);
    await waitUntil(async () => (await page.getByLabel('Type').inputValue()) === 'clip', 'the Type select shows Clips');
    assert.equal(await search.inputValue(), '');
    await waitUntil(async () => (await page.getByRole('article').count()) === 2, 'the two clips are left');
    await waitUntil(async () => hashOf() === '#/?type=clip', () => `an unknown status is dropped from the address (${hashOf()})`);

    await page.getByLabel('Type').selectOption({ label: 'All' });
    await waitUntil(async () => hashOf() === '#/', () => `no filters: #/ (${hashOf()})`);
    await page.getByRole('article').nth(29).waitFor();
  });

  it('a device id in the address that no device of the account has is shown in the Device select, and All devices takes it away', async () => {
    const hashOf = () => new URL(page.url()).hash;
    const device = page.getByLabel('Device');
    const shown = () => device.evaluate((s) => (s as unknown as { selectedOptions: Array<{ textContent: string | null }> }).selectedOptions[0]?.textContent ?? '');
    // No device yet: the filter is in use all the same (nothing matches), so it must be visible.
    await page.goto(`${server.url}/#/?device=gone-1`);
    await page.getByText('No recordings match.').waitFor();
    await waitUntil(async () => (await device.count()) === 1 && (await shown()) === 'gone-1', 'the Device select, showing gone-1');
    // With a device: the id is an option beside it, not a blank select.
    await cliJson(['devices', 'add', '--db', server.db, '--account', server.accountId, '--id', 'ring-1', '--name', 'Ring', '--model', 'ring']);
    await page.reload();
    await page.getByText('No recordings match.').waitFor();
    await waitUntil(async () => (await device.locator('option', { hasText: 'Ring' }).count()) === 1, 'the devices are loaded');
    assert.equal(await device.inputValue(), 'gone-1');
    assert.equal(await shown(), 'gone-1');
    await device.selectOption({ label: 'All devices' });
    await waitUntil(async () => hashOf() === '#/', () => `no filters: #/ (${hashOf()})`);
    await page.getByRole('article').nth(29).waitFor();
    assert.equal(await device.locator('option', { hasText: 'gone-1' }).count(), 0, 'the id is no longer offered');
  });

  it("times are shown in the browser's own time zone", async () => {
    for (const timezoneId of ['Asia/Kathmandu', 'America/Los_Angeles']) {
      const context = await browser.newContext({ timezoneId, locale: 'en-GB', storageState: await page.context().storageState() });
      const other = await context.newPage();
      await other.goto(`${server.url}/`);
      const card = other.getByRole('article').filter({ hasText: 'Groceries' });
      await card.waitFor();
      const expected = new Date(groceriesAt).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: timezoneId });
      assert.match(await card.innerText(), new RegExp(`\\b${expected}\\b`), timezoneId);
      await context.close();
    }
  });

  it('the recording page saves with If-Match: an edit made elsewhere in between gives the "changed" alert with Reload, nothing overwritten', async () => {
    await page.getByRole('article').filter({ hasText: 'Meeting notes' }).getByRole('link').click();
    await page.getByLabel('Title').waitFor();
    assert.equal(await page.getByLabel('Title').inputValue(), 'Meeting notes');
    assert.match(await page.getByLabel('Transcript').inputValue(), /weekly meeting/);
    await screens(page, 'recording');

    await page.getByLabel('Title').fill('Weekly meeting');
    await page.getByLabel('Pinned').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    let stored = (await server.api('GET', `/api/v2/recordings/${ids.meeting}`)).json.recording;
    assert.equal(stored.title, 'Weekly meeting');
    assert.equal(stored.pinned, true);

    // Someone else edits (revision 3), then this page saves over revision 2.
    const other = await server.api('PATCH', `/api/v2/recordings/${ids.meeting}`, { summary: 'Edited elsewhere' }, { 'if-match': String(stored.revision) });
    assert.equal(other.status, 200);
    await page.getByLabel('Title').fill('My title');
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /changed/);
    await screens(page, 'recording-conflict');
    stored = (await server.api('GET', `/api/v2/recordings/${ids.meeting}`)).json.recording;
    assert.equal(stored.title, 'Weekly meeting', 'nothing overwritten');
    assert.equal(stored.summary, 'Edited elsewhere');

    await alert.getByRole('button', { name: 'Reload' }).click();
    await waitUntil(async () => (await page.getByLabel('Summary').inputValue()) === 'Edited elsewhere', 'the form shows the newer revision');
    assert.equal(await page.getByLabel('Summary').inputValue(), 'Edited elsewhere');
    assert.equal(await page.getByLabel('Title').inputValue(), 'Weekly meeting');
    assert.equal(await page.getByRole('alert').count(), 0);
  });

  it('a save after the recording was deleted elsewhere says so (410): the text stays to copy, read-only, without Save or Delete; nothing is brought back, and leaving gives the draft up', async () => {
    const gone = await createRecording(server, { type: 'clip', title: 'Soon deleted', transcript: 'Deleted from another tab.' });
    await page.goto(`${server.url}/#/recordings/${gone.id}`);
    await page.getByLabel('Title').waitFor();
    // The page has loaded all it shows (its deliveries too) before the deletion elsewhere.
    await page.getByRole('region', { name: 'Deliveries' }).getByText('No webhook deliveries').waitFor();
    assert.equal((await server.api('DELETE', `/api/v2/recordings/${gone.id}`, undefined, { 'if-match': String(gone.revision) })).status, 204);
    await page.getByLabel('Title').fill('Too late');
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /deleted elsewhere.*still below, to copy/s);
    await page.getByRole('status').filter({ hasText: 'Not saved: this recording no longer exists' }).waitFor();
    // Nothing left to save to or delete: the buttons are gone, the edited text stays, read-only.
    assert.equal(await page.getByRole('button', { name: 'Save' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await page.getByLabel('Title').inputValue(), 'Too late');
    assert.equal(await page.getByLabel('Title').isEditable(), false);
    assert.equal(await page.getByLabel('Transcript').isEditable(), false);
    // Enter in a field submits nothing more.
    const patches: string[] = [];
    const seen = (r: { method(): string; url(): string }) => void (r.method() === 'PATCH' && patches.push(r.url()));
    page.on('request', seen);
    await page.getByLabel('Title').press('Enter');
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    page.off('request', seen);
    assert.deepEqual(patches, []);
    await page.getByRole('status').filter({ hasText: 'Not saved: this recording no longer exists' }).waitFor();
    await screens(page, 'recording-deleted-elsewhere');
    assert.equal((await server.api('GET', `/api/v2/recordings/${gone.id}`)).status, 410, 'still deleted');
    // The edit is still a draft: leaving asks, and yes leaves.
    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await page.getByRole('link', { name: '← All recordings' }).click();
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /not saved/);
  });

  it('leaving a recording with unsaved edits asks first: no keeps the page and the edit, yes leaves', async () => {
    await page.goto(`${server.url}/#/recordings/${ids.meeting}`);
    await page.getByLabel('Title').waitFor();
    await page.getByLabel('Title').fill('A draft title');
    const asked: string[] = [];
    page.once('dialog', (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await page.getByRole('link', { name: '← All recordings' }).click();
    await waitUntil(async () => asked.length === 1, 'the question');
    assert.match(asked[0]!, /not saved/);
    assert.equal(await page.getByLabel('Title').inputValue(), 'A draft title', 'still here, with the edit');
    assert.match(page.url(), new RegExp(`#/recordings/${ids.meeting}$`));
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: '← All recordings' }).click();
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    // Nothing was saved, and the draft was given up; a clean form leaves without a question.
    assert.equal((await server.api('GET', `/api/v2/recordings/${ids.meeting}`)).json.recording.title, 'Weekly meeting');
    await page.getByRole('article').filter({ hasText: 'Weekly meeting' }).getByRole('link').click();
    await page.getByLabel('Title').waitFor();
    assert.equal(await page.getByLabel('Title').inputValue(), 'Weekly meeting');
    // Back is not asked about (it cannot be refused without disordering the history): the draft
    // waits for the way back instead.
    await page.getByLabel('Title').fill('A kept draft');
    await page.goBack();
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    await page.goForward();
    await page.getByLabel('Title').waitFor();
    assert.equal(await page.getByLabel('Title').inputValue(), 'A kept draft');
    await page.getByRole('status').filter({ hasText: 'Unsaved changes' }).waitFor();
    // Signing out with it asks too; no keeps everything.
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.equal(await page.getByLabel('Title').inputValue(), 'A kept draft');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: '← All recordings' }).click();
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    assert.equal(asked.length, 1, 'the other questions were answered by the handlers above');
  });

  it('an answer that is not reclib\'s JSON (a proxy\'s sign-in page) is an error, not an empty library; a malformed link is Page not found', async () => {
    await page.route('**/api/v2/recordings?*', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<html><body>Sign in to the proxy</body></html>' }));
    try {
      await page.goto(`${server.url}/#/`);
      await page.reload();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /cannot read/);
      assert.equal(await page.getByText('No recordings yet.').count(), 0);
    } finally {
      await page.unroute('**/api/v2/recordings?*');
    }
    await page.goto(`${server.url}/#/recordings/%E0%A4%A`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  });

  it('Delete asks in a dialog; confirming deletes the recording (410 afterwards) and returns to the library', async () => {
    await page.goto(`${server.url}/#/recordings/${ids.yesterday}`);
    await page.getByLabel('Title').waitFor();
    // Escape cancels, and focus goes back to the button that opened the dialog.
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').waitFor();
    assert.equal(await focusAsDialogLeaves(page, () => page.keyboard.press('Escape')), 'Delete');
    assert.equal(await page.getByRole('dialog').count(), 0);
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await screens(page, 'recording-delete-dialog');
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 1, "while asking, the dialog's Delete is the only one");
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    assert.equal((await server.api('GET', `/api/v2/recordings/${ids.yesterday}`)).status, 410);
  });

  it('Sign out the server refuses (a proxy, the writer restarting) says so and stays signed in; the next try signs out', async () => {
    await page.goto(`${server.url}/#/`);
    await page.getByRole('heading', { name: 'Library', level: 1 }).waitFor();
    await page.route('**/api/session', (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({ status: 503, contentType: 'application/json', headers: { 'retry-after': '1' }, body: JSON.stringify({ error: { code: 'unavailable', message: 'the writer thread is restarting' } }) })
        : route.continue(),
    );
    try {
      await page.getByRole('button', { name: 'Sign out' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /^Not signed out: the writer thread is restarting\. Try again\.$/);
      assert.equal(await page.getByRole('button', { name: 'Sign in' }).count(), 0, 'not shown as signed out');
      await screens(page, 'sign-out-refused');
    } finally {
      await page.unroute('**/api/session');
    }
  });

  it('Sign out ends the session on the server: the old cookie is refused afterwards', async () => {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'reclib_session');
    assert.ok(cookie, 'the session cookie is set');
    const before = await fetch(`${server.url}/api/session`, { headers: { cookie: `reclib_session=${cookie.value}` } });
    assert.equal(before.status, 200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const afterwards = await fetch(`${server.url}/api/v2/recordings`, { headers: { cookie: `reclib_session=${cookie.value}` } });
    assert.equal(afterwards.status, 401);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('/docs, the API reference, runs under its CSP (its inline script and style allowed by hash)', async () => {
    await page.goto(`${server.url}/docs`);
    await page.getByText('reclib API 2.0.0').waitFor();
    await page.getByText('Create a recording (idempotent').first().waitFor();
    await page.locator('#token').fill(server.token);
    // Send shows the headers a client needs next (the limits, the request id) with the answer.
    const list = page.locator('details').filter({ has: page.locator('summary', { hasText: /^GET\/api\/v2\/recordings {2}/ }) });
    await list.locator('summary').first().click();
    await list.getByRole('button', { name: 'Send' }).click();
    await waitUntil(async () => /^200 OK\n[\s\S]*ratelimit-remaining: \d+[\s\S]*x-request-id: req_/.test(await list.locator('pre').first().innerText()), 'the answer with its headers');
    // A stream is shown as it comes, and Send becomes Stop (it used to wait for an end that never comes).
    const stream = page.locator('details').filter({ has: page.locator('summary', { hasText: /^GET\/api\/v2\/events\/stream/ }) });
    await stream.locator('summary').first().click();
    await stream.getByRole('button', { name: 'Send' }).click();
    await stream.getByRole('button', { name: 'Stop' }).waitFor();
    await waitUntil(async () => (await stream.locator('pre').first().innerText()).startsWith('200 OK'), 'the stream answered');
    await server.api('POST', '/api/v2/recordings', { type: 'memo', title: 'Seen in the docs' }, { 'idempotency-key': 'docs-stream-1' });
    await waitUntil(async () => /event: recording\.created/.test(await stream.locator('pre').first().innerText()), 'the event shows');
    await stream.getByRole('button', { name: 'Stop' }).click();
    await stream.getByRole('button', { name: 'Send' }).waitFor();
  });

  it('no request left the server origin and the page logged no errors', () => {
    assert.deepEqual(foreign, []);
    // Expected network errors: the failed sign-in and the signed-out session check (401), the
    // conflict (412), the save of a recording deleted elsewhere (410), the refused sign-out (503).
    assert.deepEqual(consoleErrors.filter((e) => !/status of (401|410|412|503)/.test(e)), []);
  });
});
