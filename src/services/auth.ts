// Accounts, API keys and sessions (docs/decisions.md §3). Secrets are returned once and only their
// SHA-256 is stored; passwords use scrypt.
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import type { Core } from '../context';
import { CommitWatch } from '../db/commit-watch';
import { AppError, invalid, notFound } from '../errors';
import { newId, newSecret, sha256Hex } from '../ids';
import { isPermission, PERMISSIONS, type Permission, type Principal } from '../permissions';
import { AuthStore, type AccountRow, type KeyRow, type SessionRow } from '../store/auth-store';
import { KeyUses } from './key-uses';
import { PrincipalCache, type CachedCredential } from './principal-cache';

export const MAX_ACTIVE_KEYS = 50;
export const DEFAULT_KEY_DAYS = 90;
export const DEFAULT_SESSION_HOURS = 30 * 24;
const DAY = 86_400_000;
/** lastUsedAt is written at most this often per key, so reads do not turn into writes. */
const TOUCH_EVERY_MS = 60_000;

export interface KeyMetadata {
  id: string;
  name: string;
  permissions: Permission[];
  integrationId: string;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface SessionInfo {
  id: string;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
}

const sessionInfo = (s: SessionRow): SessionInfo => ({ id: s.id, createdAt: s.created_at, expiresAt: s.expires_at, endedAt: s.ended_at });

export const keyMetadata = (k: KeyRow): KeyMetadata => ({
  id: k.id,
  name: k.name,
  permissions: JSON.parse(k.permissions) as Permission[],
  integrationId: k.integration_id,
  createdAt: k.created_at,
  expiresAt: k.expires_at,
  lastUsedAt: k.last_used_at,
  revokedAt: k.revoked_at,
});

const SCRYPT = { N: 16384, r: 8, p: 1 };

function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * The rules of an account's name and password, before anything is written (the CLI checks them
 * before it creates a new database file for the account).
 */
export function checkAccountInput(name: string | undefined, password: string | undefined): void {
  if (name !== undefined && !name.trim()) throw invalid('name must not be empty');
  if (name !== undefined && name.trim().length > 200) throw invalid('name must be at most 200 characters');
  if (password !== undefined && password.length < 8) throw invalid('password must be at least 8 characters');
}

/**
 * The verifier of sign-ins naming no usable account, so they cost the same scrypt as a wrong
 * password: a fixed one with SCRYPT's parameters (test/http/session.test.ts checks they match), not
 * made at run time, which took a synchronous scrypt on the thread serving the first such sign-in.
 */
export const NO_ACCOUNT_HASH = 'scrypt$16384$8$1$9kc9zLghMQ5tYrPzt0bZlA==$3ss5WWR0xlWE1WNHXmqUCpZefyGvW1kIaHUuOgQrqEg=';

/**
 * Sign-ins verify their password (~40 ms of scrypt) on libuv's thread pool, not on the thread that
 * serves them: on `reclib serve` that is the writer thread, and a stream of sign-ins (even for names
 * no account has) held every write behind it. At most this many at once, so the pool keeps threads
 * for file work (the WAL's fsyncs among it); the rest wait their turn.
 */
const MAX_VERIFYING = 2;
let verifying = 0;
const waitingToVerify: Array<() => void> = [];

async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  if (verifying >= MAX_VERIFYING) await new Promise<void>((resolve) => waitingToVerify.push(resolve));
  verifying++;
  try {
    const actual = await new Promise<Buffer>((resolve, reject) =>
      scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }, (e, key) => (e ? reject(e) : resolve(key))),
    );
    return timingSafeEqual(actual, expected);
  } finally {
    verifying--;
    waitingToVerify.shift()?.();
  }
}

/** How account names are compared: Unicode case folded, canonical composition, outer spaces ignored. */
export const nameKey = (name: string): string => name.trim().normalize('NFC').toLowerCase();

export class AuthService {
  readonly store: AuthStore;
  private readonly allPermissions: ReadonlySet<Permission>;
  private readonly principals: PrincipalCache;
  /** Key uses noted by authenticate(), written after the request (see key-uses.ts). */
  readonly keyUses: KeyUses;

  constructor(private readonly core: Core) {
    this.store = new AuthStore(core.db);
    const commits = CommitWatch.of(core.db, () => this.store.dataVersion());
    this.principals = new PrincipalCache(() => commits.current());
    this.keyUses = new KeyUses(core.writer, this.store);
    this.allPermissions = new Set<Permission>(PERMISSIONS);
  }

  /**
   * Account names are unique regardless of case (they sign in, docs/decisions.md §8). The check runs in the
   * write transaction, so two creators (server and CLI) cannot both take a name. Databases from
   * before the rule may hold duplicates: they are kept, and signing in by such a name is refused.
   */
  createAccount(name: string, password?: string): AccountRow {
    checkAccountInput(name, password);
    const row: AccountRow = {
      id: newId('acc'),
      name,
      password_hash: password === undefined ? null : hashPassword(password),
      app_integration: newId('int'),
      created_at: this.core.writer.now,
    };
    this.core.writer.write(() => {
      const taken = this.accountsNamed(name)[0];
      if (taken) {
        throw invalid(`name: an account named ${JSON.stringify(taken.name)} already exists (${taken.id}); account names are unique regardless of case, choose another`);
      }
      this.store.insertAccount(row);
    });
    return row;
  }

  /**
   * Accounts whose name equals `name` ignoring case (and surrounding spaces, which phone keyboards
   * add). Compared here rather than in SQL because SQLite folds only ASCII case; an installation
   * has a handful of accounts, and creating one or signing in by name is rare and rate limited.
   */
  accountsNamed(name: string): AccountRow[] {
    const key = nameKey(name);
    return this.store.accounts().filter((a) => nameKey(a.name) === key);
  }

  /** Every account, for the admin CLI. */
  accounts(): AccountRow[] {
    return this.store.accounts();
  }

  /** False on a new library (the first-run hint). */
  hasAccounts(): boolean {
    return this.store.hasAccounts();
  }

  account(id: string): AccountRow {
    const a = this.store.account(id);
    if (!a) throw notFound(`account ${id}`);
    return a;
  }

  createKey(accountId: string, input: { name: string; permissions: string[]; expiry?: number | undefined }): { key: KeyMetadata; secret: string } {
    this.account(accountId);
    const name = input.name.trim();
    if (!name || name.length > 200) throw invalid('name must be 1-200 characters');
    const unknown = input.permissions.filter((p) => !isPermission(p));
    if (unknown.length) throw invalid(`permissions: unknown permission ${unknown.map((p) => JSON.stringify(p)).join(', ')}`);
    if (input.permissions.length === 0) throw invalid('permissions must name at least one permission');
    const days = input.expiry ?? DEFAULT_KEY_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > 365) throw invalid('expiry must be a whole number of days from 1 to 365');
    const secret = newSecret('rlk');
    const row = this.core.writer.write(() => {
      const now = this.core.writer.now;
      if (this.store.activeKeyCount(accountId, now) >= MAX_ACTIVE_KEYS) {
        throw new AppError('limit_reached', `an account has at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`);
      }
      const k = {
        id: newId('key'),
        account_id: accountId,
        name,
        permissions: JSON.stringify([...new Set(input.permissions)]),
        integration_id: newId('int'),
        secret_hash: sha256Hex(secret),
        created_at: now,
        expires_at: now + days * DAY,
      };
      this.store.insertKey(k);
      return { ...k, last_used_at: null, revoked_at: null };
    });
    return { key: keyMetadata(row), secret };
  }

  listKeys(accountId: string): KeyMetadata[] {
    this.account(accountId);
    return this.store.keys(accountId).map((k) => keyMetadata({ ...k, last_used_at: this.keyUses.unwritten(k.id) ?? k.last_used_at }));
  }

  /** Revokes a key; returns it as it is now (revokedAt set, or kept from an earlier revocation). */
  revokeKey(accountId: string, keyId: string): KeyMetadata {
    return this.core.writer.write(() => {
      if (!this.store.key(accountId, keyId)) throw notFound(`key ${keyId}`);
      this.store.revokeKey(accountId, keyId, this.core.writer.now);
      this.core.writer.onCommit(() => this.principals.clear());
      return keyMetadata(this.store.key(accountId, keyId)!);
    });
  }

  createSession(accountId: string, ttlHours = DEFAULT_SESSION_HOURS): { token: string; expiresAt: number } {
    this.account(accountId);
    if (!Number.isInteger(ttlHours) || ttlHours < 1 || ttlHours > 24 * 366) throw invalid('ttl-hours must be 1-8784');
    const token = newSecret('rls');
    const now = this.core.writer.now;
    const expiresAt = now + ttlHours * 3_600_000;
    this.core.writer.write(() =>
      this.store.insertSession({ id: newId('ses'), account_id: accountId, token_hash: sha256Hex(token), created_at: now, expires_at: expiresAt }),
    );
    return { token, expiresAt };
  }

  /**
   * Password login by account id or account name (docs/decisions.md §8). The same error for an unknown
   * account and a wrong password, and the same work (one scrypt) for both. `countAttempt` is
   * called with the attempt's budget key before the password is checked: the account id when
   * `account` names one account (so its id and its name, in any case, share one budget), else
   * the folded name.
   */
  async login(account: string, password: string, countAttempt: (budgetKey: string) => void = () => {}): Promise<{ token: string; expiresAt: number }> {
    countAttempt(this.loginBudgetKey(account));
    const verified = this.loginTarget(account).a?.password_hash;
    const ok = await verifyPassword(password, verified ?? NO_ACCOUNT_HASH);
    // Read again after the wait: the account as it is now (renamed, deleted, its password changed).
    const { named, a } = this.loginTarget(account);
    if (named.length > 1) {
      throw new AppError('unauthenticated', `${named.length} accounts share this name (from before names were unique); sign in with your account id (acc_…, shown by reclib accounts list)`);
    }
    if (!a?.password_hash || !ok || a.password_hash !== verified) throw new AppError('unauthenticated', 'account or password is wrong');
    return this.createSession(a.id);
  }

  /**
   * The budget key login() counts an attempt to sign in as `account` against (on `reclib serve` the
   * main thread counts it before the writer thread signs in: http/session-routes.ts): the
   * account's, or the name's when no single account has it. Not also one that all unknown names
   * share: once a flood had spent it, an unknown name got 429 and an account's name 401, telling
   * which names exist. What a flood of fresh names costs is the pool's scrypt, two at a time.
   */
  loginBudgetKey(account: string): string {
    return this.loginTarget(account).budgetKey;
  }

  private loginTarget(account: string): { named: AccountRow[]; a: AccountRow | undefined; budgetKey: string } {
    const byId = this.store.account(account);
    const named = byId ? [byId] : this.accountsNamed(account);
    const a = named.length === 1 ? named[0] : undefined;
    return { named, a, budgetKey: a ? a.id : `name:${nameKey(account)}` };
  }

  /** The signed-in account and its session's expiry (GET /api/session). */
  sessionInfo(principal: Principal): { account: { id: string; name: string }; session: { expiresAt: number } } {
    const s = principal.kind === 'session' ? this.store.sessionById(principal.credentialId) : undefined;
    if (!s) throw new AppError('session_required', 'this operation needs a signed-in session (rls_… token or cookie); API keys are refused');
    const a = this.account(s.account_id);
    return { account: { id: a.id, name: a.name }, session: { expiresAt: s.expires_at } };
  }

  endSession(token: string): void {
    const s = this.store.sessionByHash(sha256Hex(token));
    if (!s) return;
    this.core.writer.write(() => {
      this.store.endSession(s.id, this.core.writer.now);
      this.core.writer.onCommit(() => this.principals.clear());
    });
  }

  /** Sets (replaces) an account's login password (reclib accounts set-password). */
  setPassword(accountId: string, password: string): void {
    this.account(accountId);
    checkAccountInput(undefined, password);
    const hash = hashPassword(password);
    this.core.writer.write(() => this.store.setPassword(accountId, hash));
  }

  /** An account's sessions, newest last, without tokens (only their hashes are stored). */
  listSessions(accountId: string): SessionInfo[] {
    this.account(accountId);
    return this.store.sessions(accountId).map(sessionInfo);
  }

  /**
   * Ends a session at once: the next request with its token is 401, in this process (the cache
   * is cleared after the commit) and in a server running beside the CLI (its cache sees another
   * connection's commit, principal-cache.ts).
   */
  revokeSession(accountId: string, sessionId: string): SessionInfo {
    return this.core.writer.write(() => {
      if (!this.store.session(accountId, sessionId)) throw notFound(`session ${sessionId}`);
      this.store.endSession(sessionId, this.core.writer.now);
      this.core.writer.onCommit(() => this.principals.clear());
      return sessionInfo(this.store.session(accountId, sessionId)!);
    });
  }

  /**
   * Resolves a bearer token to its principal. Unknown, malformed, revoked and expired
   * credentials all give 401 with a message that says which, without echoing the token.
   * A credential validated before is reused from the cache (see principal-cache.ts for why that
   * still sees every revocation); expiry is checked on every call.
   */
  authenticate(token: string): Principal {
    const now = this.core.writer.now;
    const isKey = token.startsWith('rlk_');
    if (!isKey && !token.startsWith('rls_')) {
      throw new AppError('unauthenticated', 'credential is not an API key (rlk_…) or session token (rls_…)');
    }
    const cached = this.principals.get(token);
    const credential =
      cached !== undefined && cached.expiresAt > now ? cached : isKey ? this.keyCredential(sha256Hex(token), now) : this.sessionCredential(sha256Hex(token), now);
    if (cached !== credential) this.principals.set(token, credential);
    this.used(credential, now);
    return credential.principal;
  }

  /**
   * The credential cached for `token`, unexpired, without the question authenticate() asks first
   * (has another connection committed since it was cached?): that question reads the -shm file
   * (src/db/commit-watch.ts), a syscall of a few µs on every request. Only for a caller that
   * checks itself that the credential is still live, in the same snapshot as its answer
   * (RecordingService.answerWhileLive, the direct get by id) or in the transaction of its write
   * (RecordingService.createGrouped's `unchecked`, the direct create): a key's revocation and a
   * session's end are the only changes a credential ever sees (no credential or account is
   * deleted, and a key's permissions never change; test/services/credential-changes.test.ts pins
   * that), so that check is exact. Call used() once it has passed (the create: once it
   * succeeded). Undefined when not cached or expired: then authenticate().
   */
  cached(token: string): CachedCredential | undefined {
    const credential = this.principals.peek(token);
    return credential !== undefined && credential.expiresAt > this.core.writer.now ? credential : undefined;
  }

  /** Notes a key's use (at most once a minute): by authenticate(), or after a cached() credential proved live. */
  used(credential: CachedCredential, now = this.core.writer.now): void {
    const { principal } = credential;
    if (principal.kind === 'key' && (credential.lastUsedAt === null || now - credential.lastUsedAt >= TOUCH_EVERY_MS)) {
      // Noted, not written here: a read must not wait for the write lock (key-uses.ts).
      this.keyUses.note(principal.credentialId, now);
      credential.lastUsedAt = now;
    }
  }

  private keyCredential(hash: string, now: number): CachedCredential {
    const k = this.store.keyByHash(hash);
    if (!k) throw new AppError('unauthenticated', 'API key is not valid');
    if (k.revoked_at !== null) throw new AppError('unauthenticated', 'API key has been revoked');
    if (k.expires_at <= now) throw new AppError('unauthenticated', 'API key has expired');
    const principal: Principal = {
      accountId: k.account_id,
      kind: 'key',
      credentialId: k.id,
      integrationId: k.integration_id,
      permissions: new Set(JSON.parse(k.permissions) as Permission[]),
    };
    return { principal, expiresAt: k.expires_at, lastUsedAt: this.keyUses.unwritten(k.id) ?? k.last_used_at };
  }

  private sessionCredential(hash: string, now: number): CachedCredential {
    const s = this.store.sessionByHash(hash);
    if (!s || s.ended_at !== null) throw new AppError('unauthenticated', 'session is not valid');
    if (s.expires_at <= now) throw new AppError('unauthenticated', 'session has expired');
    const a = this.account(s.account_id);
    const principal: Principal = { accountId: a.id, kind: 'session', credentialId: s.id, integrationId: a.app_integration, permissions: this.allPermissions };
    return { principal, expiresAt: s.expires_at, lastUsedAt: null };
  }
}
