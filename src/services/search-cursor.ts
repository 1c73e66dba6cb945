// The cursor of a recordings listing or search (GET /recordings in v2 and v1, MCP's search): where
// the next page starts, sealed. It holds a sort key, which encodes a recording's capture time, and
// a search page that spent its budget ends after the last candidate it read (recording-search.ts),
// which may be another account's recording: in the clear, a cursor told one account when someone
// else had recorded the words it searched for. So the position is encrypted and authenticated
// (AES-256-GCM under a key derived from the master secret, with the account as associated data):
// opaque, unforgeable, and valid only for the account and the filters it was issued for. A fresh
// IV each time, so the same page twice gives two cursors, both valid.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'rc2.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sort key (8 bytes) and the filters' digest (8 bytes). */
const BODY_BYTES = 16;
const SEALED_CHARS = Math.ceil(((IV_BYTES + BODY_BYTES + TAG_BYTES) * 4) / 3);

export class SearchCursors {
  private readonly key: Buffer;

  constructor(masterSecret: Buffer) {
    this.key = createHmac('sha256', masterSecret).update('reclib recordings cursor').digest();
  }

  /** `filters`: 16 hex digits naming the filters (recording-search.ts). */
  seal(accountId: string, seq: number, filters: string): string {
    const body = Buffer.alloc(BODY_BYTES);
    body.writeBigInt64BE(BigInt(seq), 0);
    body.write(filters, 8, 'hex');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(accountId, 'utf8'));
    const sealed = Buffer.concat([iv, cipher.update(body), cipher.final(), cipher.getAuthTag()]);
    return PREFIX + sealed.toString('base64url');
  }

  /** The position and filters' digest of a cursor this account was given, or undefined for anything else. */
  open(accountId: string, cursor: string): { seq: number; filters: string } | undefined {
    if (!cursor.startsWith(PREFIX) || cursor.length !== PREFIX.length + SEALED_CHARS) return undefined;
    const text = cursor.slice(PREFIX.length);
    const sealed = Buffer.from(text, 'base64url');
    if (sealed.length !== IV_BYTES + BODY_BYTES + TAG_BYTES || sealed.toString('base64url') !== text) return undefined;
    let body: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(accountId, 'utf8'));
      decipher.setAuthTag(sealed.subarray(IV_BYTES + BODY_BYTES));
      body = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, IV_BYTES + BODY_BYTES)), decipher.final()]);
    } catch {
      return undefined;
    }
    return { seq: Number(body.readBigInt64BE(0)), filters: body.toString('hex', 8, 16) };
  }
}
