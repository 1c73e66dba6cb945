// The web app's pure rules: how often a still-changing thing is looked at again (src/web/poll-pace.ts)
// and what a hash names (src/web/route-parse.ts), a malformed one included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIRST_POLL_MS, MAX_POLL_MS, nextPollMs } from '../../src/web/poll-pace';
import { libraryFilters, libraryHash, parseRoute } from '../../src/web/route-parse';

describe('web app: polling pace', () => {
  it('doubles while nothing changes, up to a minute, and starts again at 2 s after a change', () => {
    const waits: number[] = [];
    let ms = FIRST_POLL_MS / 2;
    for (let i = 0; i < 8; i++) waits.push((ms = nextPollMs(ms, false)));
    assert.deepEqual(waits, [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    assert.equal(nextPollMs(MAX_POLL_MS, true), FIRST_POLL_MS);
    // A failing receiver's retries stay queued for hours: an open page then looks ~once a minute,
    // not 30 times (the session's limit is 120 requests a minute for all its tabs).
    const firstMinute = waits.reduce((n, _w, i) => (waits.slice(0, i + 1).reduce((a, b) => a + b, 0) <= 60_000 ? n + 1 : n), 0);
    assert.ok(firstMinute <= 5, `${firstMinute} looks in the first minute`);
  });
});

describe('web app: routes', () => {
  it('names pages by hash; a recording id is decoded, a malformed escape is the not-found page', () => {
    assert.deepEqual(parseRoute(''), { page: 'library', query: '' });
    assert.deepEqual(parseRoute('#/?q=meet'), { page: 'library', query: 'q=meet' });
    assert.deepEqual(parseRoute('#/devices'), { page: 'devices' });
    assert.deepEqual(parseRoute('#/recordings/rec_a%2Fb'), { page: 'recording', id: 'rec_a/b' });
    assert.deepEqual(parseRoute('#/recordings/%E0%A4%A'), { page: 'missing' });
    assert.deepEqual(parseRoute('#/nowhere'), { page: 'missing' });
  });
});

describe('web app: the library\'s filters in the address', () => {
  it('round-trips every filter, spaces, quotes, accents and emoji included; none set is #/', () => {
    const all = { q: '"quarterly report" café 🎉 & =?#', type: 'memo', deviceId: 'ring-1.kitchen:2', status: 'no_speech' };
    const hash = libraryHash(all);
    assert.match(hash, /^#\/\?q=/);
    assert.doesNotMatch(hash.slice(1), /#/, 'a # in q is escaped, so the hash ends where it should');
    const route = parseRoute(hash);
    assert.equal(route.page, 'library');
    assert.deepEqual(libraryFilters((route as { query: string }).query), all);
    assert.equal(libraryHash({ q: '', type: '', deviceId: '', status: '' }), '#/');
    assert.equal(libraryHash({ q: 'meet', type: '', deviceId: '', status: '' }), '#/?q=meet');
  });

  it('no filter named is null (the library keeps the last ones); what the API would refuse is dropped, q cut to 200 characters', () => {
    assert.equal(libraryFilters(''), null);
    assert.equal(libraryFilters('utm_source=x'), null);
    assert.deepEqual(libraryFilters('type=podcast&status=lost&q=a'), { q: 'a', type: '', deviceId: '', status: '' });
    assert.deepEqual(libraryFilters('type=clip'), { q: '', type: 'clip', deviceId: '', status: '' });
    // The API counts q's length in UTF-16 units (an emoji is two): 100 emoji, none cut in half.
    assert.equal(libraryFilters(`q=a${'🎉'.repeat(250)}`)!.q, `a${'🎉'.repeat(99)}`);
    assert.equal(libraryFilters(`q=${'x'.repeat(250)}`)!.q.length, 200);
    // A device id is kept whole up to the API's 256 characters, and dropped when no device could have it.
    const long = `d${'x'.repeat(255)}`;
    assert.equal(libraryFilters(`device=${long}`)!.deviceId, long);
    for (const bad of [`${long}x`, 'ring 1', '-ring', '%00']) assert.equal(libraryFilters(`device=${encodeURIComponent(bad)}`)!.deviceId, '', bad);
  });
});
