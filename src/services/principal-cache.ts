// Validated credentials by their token, so that a request with a known key or session skips
// hashing the token (~1 µs), the credential lookup and the parsing of its permissions (the hot
// path of every authenticated request). The tokens stay in this process's memory only, as the
// requests carrying them do; the database keeps their hashes.
//
// Why it stays correct: revocation must apply to the very next request (docs/decisions.md §16),
// also when the admin CLI revokes from another process. Every lookup first asks whether another
// connection has committed to the file since the last look (SQLite's `PRAGMA data_version`, asked
// only when the WAL index header moved: src/db/commit-watch.ts); if so, the whole cache is
// dropped. This process's own changes to keys and sessions (revoke, logout) drop it too
// (AuthService calls clear() after their commit). Expiry is checked against the clock on every
// request by the caller, never cached. The one lookup without that question, peek(), is for a
// caller that checks itself that the credential is still live, in the same snapshot as its answer
// or in the transaction of its write (the direct get by id and create: AuthService.cached).
import type { Principal } from '../permissions';

export interface CachedCredential {
  principal: Principal;
  expiresAt: number;
  /** Keys: the lastUsedAt this process last noted or read (noted at most once a minute, written after the request: key-uses.ts). */
  lastUsedAt: number | null;
}

/** Bounded memory: past this many credentials the cache starts over (costs re-lookups only). */
const MAX_ENTRIES = 10_000;

export class PrincipalCache {
  private entries = new Map<string, CachedCredential>();
  private version: number | undefined;

  constructor(
    /** Changes whenever another connection committed (CommitWatch over PRAGMA data_version). */
    private readonly dataVersion: () => number,
  ) {}

  /**
   * The credential cached for this token, unless another connection committed since it was
   * cached. Call before looking the credential up in the database, so that a commit racing with
   * that lookup changes the version seen by the next request.
   */
  get(token: string): CachedCredential | undefined {
    const version = this.dataVersion();
    if (version !== this.version) {
      this.forget();
      this.version = version;
      return undefined;
    }
    return this.entries.get(token);
  }

  /**
   * The credential cached for this token, whether or not another connection committed since: for
   * a caller that checks the credential is live itself (AuthService.cached).
   */
  peek(token: string): CachedCredential | undefined {
    return this.entries.get(token);
  }

  set(token: string, credential: CachedCredential): void {
    if (this.entries.size >= MAX_ENTRIES) this.forget();
    this.entries.set(token, credential);
  }

  clear(): void {
    this.forget();
  }

  /**
   * A new Map rather than clear(): this runs at every commit of the writer thread, and a cleared
   * Map keeps its old table linked to the new one, so the credentials cached in each would outlive
   * the young generation (src/numbered-table.ts says how that costs).
   */
  private forget(): void {
    this.entries = new Map();
  }
}
