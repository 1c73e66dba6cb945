// forget() asks a witness's text whether it still has a word form (src/services/search-terms.ts
// WitnessText): by a search of the lower-cased text where that is exact, otherwise by the set of
// every form of the text. Whatever the text and the form, the answer must be the set's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formsOf, WitnessText } from '../../src/services/search-terms';

// Pieces that put words next to everything the rules of words care about: separators, accents
// (precomposed and combining), case that lower-cases to more than one unit ("İ"), Greek final
// sigma, astral letters and marks, private use, lone surrogates, digits.
const PIECES = ['meet', 'Meet', 'meeting', 'café', 'cafe', 'CAFÉ', 'cafe\u0301', 'naïve', 'x', 'a1', '42', 'İstanbul', 'ΟΔΟΣ', 'όδος', '𝐀bc', 'a𝐀', '\u{1F600}', '\uE000', 'ab\uE000', '\uD800', '\uDC00', 'e\u0301', '\u0301', 'ि', 'किताब'];
const SEPARATORS = [' ', ', ', '-', '\n', '.', "'", '’', '', '_', '\u00A0'];
const textArb = fc.array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(...SEPARATORS)), { maxLength: 12 }).map((parts) => parts.map(([p, s]) => p + s).join(''));
const formArb = fc.oneof(
  fc.constantFrom(...PIECES).map((p) => p.toLowerCase()),
  textArb.chain((t) => {
    const forms = [...formsOf(t)];
    return forms.length > 0 ? fc.constantFrom(...forms) : fc.constant('meet');
  }),
  fc.string({ maxLength: 4 }),
);

describe('a witness text answers for a word form as the set of its forms does', () => {
  it('for any title, transcript and forms asked', () => {
    fc.assert(
      fc.property(textArb, textArb, fc.array(formArb, { minLength: 1, maxLength: 8 }), (title, transcript, asked) => {
        const witness = new WitnessText({ title, transcript });
        const forms = formsOf(title, transcript);
        for (const form of asked) assert.equal(witness.has(form), forms.has(form), `${JSON.stringify(form)} in ${JSON.stringify({ title, transcript })}`);
      }),
      { numRuns: 3000 },
    );
  });

  it('cases the search must not answer alone', () => {
    const w = (title: string, transcript = '') => new WitnessText({ title, transcript });
    assert.equal(w('Café au lait').has('cafe'), true, 'the form without diacritics');
    assert.equal(w('cafe\u0301').has('cafe'), true, 'a combining accent, folded away');
    assert.equal(w('cafe\u0301').has('cafe\u0301'), true);
    assert.equal(w('meeting').has('meet'), false, 'a prefix is not a word');
    assert.equal(w('remeet').has('meet'), false, 'nor the end of one');
    assert.equal(w('𝐀meet').has('meet'), false, 'an astral letter before it is part of the word');
    assert.equal(w('meet\u0301').has('meet'), true, 'its folded form');
    assert.equal(w('meet\uE000').has('meet'), false, 'a private-use character is part of the word');
    assert.equal(w('\uD800meet').has('meet'), true, 'a lone surrogate separates');
    const sigma = 'ΟΔΟΣ'.toLowerCase();
    assert.equal(w('ΟΔΟΣ').has(sigma), true, 'Greek capitals, lower-cased as textWords() does');
    for (const s of ['οδοσ', 'οδος']) assert.equal(w('ΟΔΟΣ').has(s), s === sigma, `${s} (σ or final ς)`);
    assert.equal(w('title', 'meet').has('meet'), true, 'the transcript is asked too');
    assert.equal(w('ti', 'tle').has('title'), false, 'title and transcript are not one text');
    assert.equal(w('a b').has('a b'), false, 'a form with a separator is no word');
  });

  it('a form found again and again inside longer words is searched for after each word, not at each place it occurs', () => {
    const indexOf = String.prototype.indexOf;
    let searches = 0;
    String.prototype.indexOf = function (this: string, ...args: Parameters<string['indexOf']>) {
      searches++;
      return indexOf.apply(this, args);
    };
    try {
      const a = 'a'.repeat(60_000);
      assert.equal(new WitnessText({ title: '', transcript: a }).has('a'.repeat(30_000)), false);
      assert.ok(searches <= 4, `${searches} searches of the text, not one per place the form occurs in the word`);
      searches = 0;
      const words = Array.from({ length: 2_000 }, (_, i) => `xaa${i}y`).join(' ');
      assert.equal(new WitnessText({ title: words, transcript: `é ${words}` }).has('aa'), false);
      assert.equal(new WitnessText({ title: words, transcript: `${words} aa` }).has('aa'), true);
      assert.ok(searches <= 2 * 2 * 2_001 + 4, `${searches} searches: at most one per word`);
    } finally {
      String.prototype.indexOf = indexOf;
    }
  });

  it('a long text asked about many forms is answered from its set once searching costs more', () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
    const witness = new WitnessText({ title: '', transcript: words.join(' ') });
    for (const word of words) assert.equal(witness.has(word), true);
    for (const word of words) assert.equal(witness.has(`${word}x`), false);
    assert.ok((witness as unknown as { forms?: Set<string> }).forms, 'the set was built');
  });
});
