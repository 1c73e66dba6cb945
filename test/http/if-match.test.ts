// docs/decisions.md §5: the one If-Match rule shared by recordings and device settings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors';
import { etag, parseIfMatch } from '../../src/http/if-match';

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e.code;
    throw e;
  }
  return 'ok';
};

describe('parseIfMatch', () => {
  it('accepts "3", W/"3" and 3 as revision 3', () => {
    for (const tag of ['"3"', 'W/"3"', '3', ' "3" ']) assert.equal(parseIfMatch(tag, { required: true }), 3, tag);
  });

  it('a missing header is 428 when required, undefined when optional', () => {
    assert.equal(codeOf(() => parseIfMatch(undefined, { required: true })), 'precondition_required');
    assert.equal(parseIfMatch(undefined, { required: false }), undefined);
    assert.equal(parseIfMatch(null, { required: false }), undefined);
  });

  it('a value over maxLength is 400 even if well formed', () => {
    assert.equal(codeOf(() => parseIfMatch(`"${'0'.repeat(99)}3"`, { required: true, maxLength: 100 })), 'invalid_request');
    assert.equal(parseIfMatch(`"${'0'.repeat(13)}3"`, { required: true, maxLength: 100 }), 3);
  });

  it('malformed values are 400: empty, *, lists, letters, unbalanced quotes, negative, too many digits', () => {
    for (const tag of ['', '*', '"1", "2"', 'abc', '"1', '1"', '-1', 'w/"1"', '"1.5"', '9'.repeat(16)]) {
      assert.equal(codeOf(() => parseIfMatch(tag, { required: true })), 'invalid_request', JSON.stringify(tag));
    }
  });

  it('etag() quotes the revision', () => {
    assert.equal(etag(7), '"7"');
  });
});
