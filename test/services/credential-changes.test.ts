// What the unchecked use of a cached credential relies on (AuthService.cached: the direct get by
// id and create take a cached principal without asking whether another connection committed, and
// check only that the key is not revoked, or the session not ended, in their own read or
// transaction): a credential's row never changes but by its revocation or end. Its account,
// permissions, integration identity and expiry, and the account's app identity (a session's
// integration), are written once, and no row is replaced (a deleted row would do no harm: the
// check finds no live credential). A change that adds such a write must also make the unchecked
// paths check it (or drop them): this test fails first, by name.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'web' ? [] : sources(p);
    return /\.ts$/.test(e.name) ? [p] : [];
  });
}

const files = [...sources(path.join(root, 'src')), path.join(root, 'schema.sql')].map((f) => ({
  file: path.relative(root, f),
  // One line per statement fragment is enough: SQL in reclib is written inline, in strings.
  text: fs.readFileSync(f, 'utf8').replace(/\s+/g, ' '),
}));

/** Columns each table's UPDATEs may set, and why the unchecked paths may ignore them. */
const MAY_SET: Record<string, string[]> = {
  api_keys: ['revoked_at', 'last_used_at'], // revoked_at is what they check; last_used_at is no part of a principal
  sessions: ['ended_at'], // what they check
  accounts: ['password_hash'], // no part of a principal (a new password leaves sessions as they are)
};

describe('a credential changes only by its revocation or end (what AuthService.cached relies on)', () => {
  for (const [table, allowed] of Object.entries(MAY_SET)) {
    it(`${table}: UPDATEs set only ${allowed.join(', ')}; no REPLACE or upsert`, () => {
      let updates = 0;
      for (const { file, text } of files) {
        for (const m of text.matchAll(new RegExp(`UPDATE\\s+(?:OR\\s+\\w+\\s+)?${table}\\s+SET\\s+(.*?)(?:\\s+WHERE\\b|['\`;]|$)`, 'gi'))) {
          updates++;
          const columns = m[1]!.split(',').map((a) => a.split('=')[0]!.trim().toLowerCase());
          for (const c of columns) assert.ok(allowed.includes(c), `${file}: UPDATE ${table} SET ${c}: the direct routes' unchecked credentials (AuthService.cached) would miss it`);
        }
        assert.doesNotMatch(text, new RegExp(`(REPLACE|INSERT\\s+OR\\s+\\w+)\\s+INTO\\s+${table}\\b`, 'i'), `${file}: replaces rows of ${table}`);
        assert.doesNotMatch(text, new RegExp(`INSERT\\s+INTO\\s+${table}\\b[^;'\`]*ON\\s+CONFLICT`, 'i'), `${file}: upserts into ${table}`);
        assert.doesNotMatch(text, new RegExp(`ALTER\\s+TABLE\\s+${table}\\b|DROP\\s+TABLE\\s+(IF\\s+EXISTS\\s+)?${table}\\b`, 'i'), `${file}: reshapes ${table}`);
      }
      assert.ok(updates >= 1, `found the ${table} UPDATEs (the pattern still matches how they are written)`);
    });
  }

  it('no trigger or foreign-key action writes to them', () => {
    for (const { file, text } of files) {
      for (const m of text.matchAll(/CREATE\s+TRIGGER\b.*?\bEND\b/gi)) {
        assert.doesNotMatch(m[0], /\b(api_keys|sessions|accounts)\b/i, `${file}: a trigger touches a credential table`);
      }
      assert.doesNotMatch(text, /ON\s+(UPDATE|DELETE)\s+(CASCADE|SET\s+NULL|SET\s+DEFAULT)/i, `${file}: a foreign-key action`);
    }
  });
});
