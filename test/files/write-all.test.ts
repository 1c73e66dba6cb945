// writeAllSync: every byte written or an error naming the file. A short write (a nearly full disk,
// a file size limit) is tested end to end in test/export/export.test.ts under `ulimit -f`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { writeAllSync, WriteError } from '../../src/files/write-all';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-write-all-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('writeAllSync', () => {
  it('on a full disk (/dev/full) throws ENOSPC as "cannot write FILE: no space left on device"', { skip: !fs.existsSync('/dev/full') && 'no /dev/full' }, () => {
    const fd = fs.openSync('/dev/full', 'w');
    try {
      assert.throws(
        () => writeAllSync(fd, Buffer.from('a line\n'), '/srv/export/recordings.jsonl'),
        (e: unknown) =>
          e instanceof WriteError && e.code === 'ENOSPC' && e.file === '/srv/export/recordings.jsonl' && e.message === 'cannot write /srv/export/recordings.jsonl: no space left on device',
      );
    } finally {
      fs.closeSync(fd);
    }
  });

  it('writes the whole buffer at a position, leaving the rest of the file', () => {
    const file = path.join(root, 'at-position');
    fs.writeFileSync(file, 'abcdefgh');
    const fd = fs.openSync(file, 'r+');
    try {
      writeAllSync(fd, Buffer.from('XYZ'), file, 2);
    } finally {
      fs.closeSync(fd);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), 'abXYZfgh');
  });
});
