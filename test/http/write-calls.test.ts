// A service call's error crosses from the writer thread as plain data (src/http/write-calls.ts) and
// is thrown again on the main thread as the app would have seen it in process.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors';
import { callError, callErrorAgain } from '../../src/http/write-calls';

const across = (e: unknown) => callErrorAgain(structuredClone(callError(e)));

describe('write call errors', () => {
  it('an AppError keeps its class, code, message and headers', () => {
    const again = across(new AppError('unavailable', 'the disk is full', { 'Retry-After': '30' }));
    assert.ok(again instanceof AppError);
    assert.equal(again.code, 'unavailable');
    assert.equal(again.message, 'the disk is full');
    assert.deepEqual(again.headers, { 'Retry-After': '30' });
  });

  it("another error keeps its name and the driver's code (SQLITE_BUSY becomes the app's 503)", () => {
    const busy = Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
    const again = across(busy) as Error & { code?: string };
    assert.ok(!(again instanceof AppError));
    assert.equal(again.name, 'SqliteError');
    assert.equal(again.code, 'SQLITE_BUSY');
    assert.equal(again.message, 'database is locked');
    // The app's log line names the first frame: where it was thrown on the writer thread.
    assert.equal(again.stack?.split('\n')[1], busy.stack?.split('\n')[1]);
    const plain = across('not an error') as Error & { code?: string };
    assert.equal(plain.name, 'Error');
    assert.equal(plain.code, undefined);
  });
});
