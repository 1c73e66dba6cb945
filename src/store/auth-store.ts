// SQL for accounts, API keys and sessions.
import type { Db } from '../db/open';

export interface AccountRow {
  id: string;
  name: string;
  password_hash: string | null;
  app_integration: string;
  created_at: number;
}

export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  permissions: string;
  integration_id: string;
  secret_hash: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface SessionRow {
  id: string;
  account_id: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
}

export class AuthStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insertAccount: db.prepare<[string, string, string | null, string, number]>(
        'INSERT INTO accounts (id, name, password_hash, app_integration, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      account: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
      accounts: db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id'),
      anyAccount: db.prepare<[], { one: number }>('SELECT 1 AS one FROM accounts LIMIT 1'),
      insertKey: db.prepare(
        `INSERT INTO api_keys (id, account_id, name, permissions, integration_id, secret_hash, created_at, expires_at)
         VALUES (@id, @account_id, @name, @permissions, @integration_id, @secret_hash, @created_at, @expires_at)`,
      ),
      keyByHash: db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE secret_hash = ?'),
      key: db.prepare<[string, string], KeyRow>('SELECT * FROM api_keys WHERE account_id = ? AND id = ?'),
      keys: db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id'),
      activeKeyCount: db.prepare<[string, number], { n: number }>(
        'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL AND expires_at > ?',
      ),
      revokeKey: db.prepare<[number, string, string]>(
        'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL',
      ),
      touchKey: db.prepare<[number, string]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
      insertSession: db.prepare<[string, string, string, number, number]>(
        'INSERT INTO sessions (id, account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      ),
      sessionByHash: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE token_hash = ?'),
      sessionById: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
      endSession: db.prepare<[number, string]>('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL'),
      session: db.prepare<[string, string], SessionRow>('SELECT * FROM sessions WHERE account_id = ? AND id = ?'),
      sessions: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE account_id = ? ORDER BY created_at, id'),
      setPassword: db.prepare<[string | null, string]>('UPDATE accounts SET password_hash = ? WHERE id = ?'),
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    };
  }

  insertAccount(a: AccountRow): void {
    this.s.insertAccount.run(a.id, a.name, a.password_hash, a.app_integration, a.created_at);
  }
  account(id: string): AccountRow | undefined {
    return this.s.account.get(id);
  }
  accounts(): AccountRow[] {
    return this.s.accounts.all();
  }
  hasAccounts(): boolean {
    return this.s.anyAccount.get() !== undefined;
  }
  insertKey(k: Omit<KeyRow, 'last_used_at' | 'revoked_at'>): void {
    this.s.insertKey.run(k);
  }
  keyByHash(hash: string): KeyRow | undefined {
    return this.s.keyByHash.get(hash);
  }
  key(accountId: string, id: string): KeyRow | undefined {
    return this.s.key.get(accountId, id);
  }
  keys(accountId: string): KeyRow[] {
    return this.s.keys.all(accountId);
  }
  activeKeyCount(accountId: string, now: number): number {
    return this.s.activeKeyCount.get(accountId, now)?.n ?? 0;
  }
  revokeKey(accountId: string, id: string, now: number): boolean {
    return this.s.revokeKey.run(now, accountId, id).changes > 0;
  }
  touchKey(id: string, now: number): void {
    this.s.touchKey.run(now, id);
  }
  insertSession(s: Omit<SessionRow, 'ended_at'>): void {
    this.s.insertSession.run(s.id, s.account_id, s.token_hash, s.created_at, s.expires_at);
  }
  sessionByHash(hash: string): SessionRow | undefined {
    return this.s.sessionByHash.get(hash);
  }
  sessionById(id: string): SessionRow | undefined {
    return this.s.sessionById.get(id);
  }
  endSession(id: string, now: number): void {
    this.s.endSession.run(now, id);
  }
  session(accountId: string, id: string): SessionRow | undefined {
    return this.s.session.get(accountId, id);
  }
  sessions(accountId: string): SessionRow[] {
    return this.s.sessions.all(accountId);
  }
  setPassword(accountId: string, hash: string | null): void {
    this.s.setPassword.run(hash, accountId);
  }
  /** Changes whenever ANOTHER connection (e.g. the admin CLI) commits to the file; this one's own commits leave it. */
  dataVersion(): number {
    return this.s.dataVersion.get()!;
  }
}
