// The app's copies of the API's fixed names (src/web/vocabulary.ts) equal the server's own, and its
// search marking follows the API's query rules (src/services/recording-search.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PERMISSIONS } from '../../src/permissions';
import { INPUT_NAMES, RECORDING_TYPES } from '../../src/services/device-inputs';
import { EVENT_TYPES } from '../../src/services/events';
import { RECORDING_STATUSES } from '../../src/services/recording-model';
import { parseQuery as serverParse } from '../../src/services/recording-search';
import { markMatches, parseQuery } from '../../src/web/search-match';
import * as v from 'valibot';
import { Id } from '../../src/http/schemas';
import { ID_PATTERN } from '../../src/ids';
import * as web from '../../src/web/vocabulary';

const marked = (text: string, q: string) => markMatches(text, parseQuery(q)).filter((p) => p.marked).map((p) => p.text);

describe('web app vocabulary and search marks', () => {
  it('the permission, event, input, type and status names offered by the app are the server\'s', () => {
    assert.deepEqual(web.PERMISSIONS, PERMISSIONS);
    assert.deepEqual(web.EVENT_TYPES, EVENT_TYPES);
    assert.deepEqual(web.INPUT_NAMES, INPUT_NAMES);
    assert.deepEqual(web.RECORDING_TYPES, RECORDING_TYPES);
    assert.deepEqual(web.RECORDING_STATUSES, RECORDING_STATUSES);
  });

  it('a device id is checked as the API checks an id', () => {
    assert.equal(web.ID_PATTERN.source, ID_PATTERN.source);
    assert.equal(v.is(Id, 'd'.repeat(web.MAX_ID_LENGTH)), true);
    assert.equal(v.is(Id, 'd'.repeat(web.MAX_ID_LENGTH + 1)), false);
  });

  it('queries split into words and phrases as the API splits them', () => {
    for (const q of ['meet', 'Café "weekly meeting" notes', '"open phrase', 'a-b c', '   ', 'ÉCOLE "x"']) {
      assert.deepEqual(parseQuery(q), serverParse(q).map((t) => ({ words: t.words.map((w) => w.normalize('NFD').replace(/\p{M}/gu, '')), phrase: t.phrase })), q);
    }
  });

  it('marks prefixes case- and accent-insensitively, one-character words whole, phrases as consecutive words', () => {
    assert.deepEqual(marked('The weekly Meeting moved', 'meet'), ['Meeting']);
    assert.deepEqual(marked('Un café à Paris', 'CAFE'), ['café']);
    assert.deepEqual(marked('a apple and a pear', 'a'), ['a', 'a']);
    assert.deepEqual(marked('the quarterly report, quarterly numbers', '"quarterly report"'), ['quarterly report']);
    assert.deepEqual(marked('report quarterly', '"quarterly report"'), []);
    assert.deepEqual(marked('nothing here', ''), []);
  });
});
