// src/http/app.ts gives Hono a TrieRouter instead of its default SmartRouter, because SmartRouter's
// first choice, RegExpRouter, cannot take this app's routes and falls back to TrieRouter anyway.
// If RegExpRouter can take them one day, this fails: choose again (and measure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { harness } from '../helpers/harness';

describe('the router of the app', () => {
  it("is the TrieRouter that Hono's SmartRouter would settle on for these routes", () => {
    const { app } = harness();
    assert.ok(app.router instanceof TrieRouter);
    const smart = new SmartRouter<unknown>({ routers: [new RegExpRouter(), new TrieRouter()] });
    for (const r of app.routes) smart.add(r.method, r.path, r.handler);
    smart.match('GET', '/healthz');
    assert.equal(smart.activeRouter.name, 'TrieRouter', 'RegExpRouter can take the routes now: SmartRouter (the default) may be the better choice');
  });
});
