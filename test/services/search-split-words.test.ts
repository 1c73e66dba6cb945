// Words the FTS5 tokenizer splits (docs/decisions.md §5 "q"): the index keeps no positions
// (schema 4, detail = none), so FTS5 refuses a quoted string of two tokens. A word with a
// character the search counts as part of a word but unicode61 does not (a Devanagari vowel sign
// such as "ि", a spacing mark) is asked for as the AND of its tokens and tested on the text, so it
// is found exactly as the matching rules say, and never causes an error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../helpers/harness';

describe('words the index tokenizer splits', () => {
  const setup = () => {
    const h = harness();
    const principal = h.services.auth.authenticate(h.key());
    const create = (title: string, transcript: string, key: string) => h.services.recordings.create(principal, { type: 'memo', title, transcript }, key).row;
    const ids = (q: string) => h.services.recordings.list({ accountId: h.accountId }, { limit: 20, q }).rows.map((r) => r.title);
    return { h, principal, create, ids };
  };

  it('a word, a prefix and a phrase with a spacing mark are found by the rules of words, not of tokens', () => {
    const { h, create, ids } = setup();
    assert.deepEqual(h.services.recordings.terms.tokens('किताब'), ['क', 'त', 'ब'], 'unicode61 splits at the vowel signs');
    create('book', 'मेरी किताब पढ़ो', 'k1');
    create('other', 'क ताब', 'k2');
    create('near', 'किताबें हैं', 'k3');
    assert.deepEqual(ids('किताब'), ['near', 'book'], 'a prefix of words, not the tokens "क" and "ताब" anywhere');
    assert.deepEqual(ids('"किताब"'), ['near', 'book'], 'a whole word; its marks are diacritics, compared without them ("किताबें")');
    assert.deepEqual(ids('"किता"'), [], 'a whole word, not a prefix');
    assert.deepEqual(ids('"मेरी किताब"'), ['book']);
    assert.deepEqual(ids('"किताब मेरी"'), [], 'word order still counts');
    assert.deepEqual(ids('ताब'), ['other'], 'the end of a word is no word: only the recording where it stands alone');
    assert.deepEqual(ids('कि'), ['near', 'other', 'book'], 'a prefix, compared without its mark ("क")');
  });

  it('a stored form that is split is expanded for an ASCII prefix, and forgotten with the last text that has it', () => {
    const { h, principal, create, ids } = setup();
    const row = create('abिcd', 'x', 'k1');
    create('abz', 'y', 'k2');
    assert.deepEqual(ids('ab'), ['abz', 'abिcd']);
    assert.deepEqual(ids('abc'), [], 'the tokens "ab" and "cd" do not make the word "abc…"');
    h.services.recordings.remove(principal, row.id, 1);
    const forms = h.services.core.db.prepare('SELECT term FROM recording_terms ORDER BY term').pluck().all();
    assert.ok(!forms.includes('abिcd'), `the deleted form is gone: ${forms.join(' ')}`);
    assert.deepEqual(ids('ab'), ['abz']);
  });

  it('a word of marks only is nothing, as in the index; a word FTS5 has no token of is tested on the text in order', () => {
    const { create, ids } = setup();
    create('marks', 'a ि b', 'k1');
    create('plain', 'a b', 'k2');
    assert.deepEqual(ids('ि'), [], 'folded, the word is empty: it matches nothing');
    assert.deepEqual(ids('"a ि b"'), ['plain', 'marks'], 'in a phrase it is left out, as the tokenizer leaves it out');
    // New Tai Lue vowel signs are letters to JavaScript's Unicode tables, separators to unicode61's.
    create('tai lue', 'x ᦰᦱ y', 'k3');
    assert.deepEqual(ids('ᦰᦱ'), ['tai lue'], 'no FTS5 token: the recordings are read in order and tested');
    assert.deepEqual(ids('ᦰ'), [], 'one character is a whole word');
  });
});
