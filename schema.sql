-- reclib: the database's one definition. Applied on open (src/db/migrate.ts); the version below
-- is PRAGMA user_version. A later change adds a numbered migration and bumps the version.
-- version: 4
-- Times are Unix milliseconds. Secrets are never stored: credentials keep a SHA-256 hash only and
-- webhook secrets are derived from the master secret file.

CREATE TABLE IF NOT EXISTS accounts (
  id              TEXT PRIMARY KEY,
  name            TEXT NOT NULL,
  password_hash   TEXT,                       -- scrypt$N$r$p$salt$hash, null: no password login
  app_integration TEXT NOT NULL UNIQUE,       -- the integration identity of the owner's sessions (app)
  created_at      INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
  id             TEXT PRIMARY KEY,            -- key_…
  account_id     TEXT NOT NULL REFERENCES accounts(id),
  name           TEXT NOT NULL,
  permissions    TEXT NOT NULL,               -- JSON array of permission names
  integration_id TEXT NOT NULL UNIQUE,        -- int_…, one per key
  secret_hash    TEXT NOT NULL UNIQUE,        -- sha256 hex of the rlk_ secret
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  last_used_at   INTEGER,
  revoked_at     INTEGER
);
CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys(account_id, created_at);

CREATE TABLE IF NOT EXISTS sessions (
  id          TEXT PRIMARY KEY,               -- ses_…
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  token_hash  TEXT NOT NULL UNIQUE,           -- sha256 hex of the rls_ token
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  ended_at    INTEGER
);

CREATE TABLE IF NOT EXISTS devices (
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  id                TEXT NOT NULL,
  name              TEXT NOT NULL,
  model             TEXT NOT NULL CHECK (model IN ('ring', 'pin', 'pendant')),
  settings_revision INTEGER NOT NULL DEFAULT 1, -- the settings ETag
  created_at        INTEGER NOT NULL,
  PRIMARY KEY (account_id, id)
);

-- Immutable input-mapping revisions (v1 /input-mappings). The newest revision of a device is its
-- v2 settings; a v2 settings PATCH appends one.
CREATE TABLE IF NOT EXISTS input_mappings (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id  TEXT NOT NULL REFERENCES accounts(id),
  id          TEXT NOT NULL,
  device_id   TEXT NOT NULL,
  inputs      TEXT NOT NULL,                  -- JSON object input → clip|memo (complete mapping)
  created_at  INTEGER NOT NULL,
  UNIQUE (account_id, id)
);
CREATE INDEX IF NOT EXISTS input_mappings_device ON input_mappings(account_id, device_id, created_at, seq);

-- The event feed. seq is the public event id; AUTOINCREMENT keeps ids monotonic even after deletes.
CREATE TABLE IF NOT EXISTS events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  type         TEXT NOT NULL,
  recording_id TEXT NOT NULL,
  revision     INTEGER NOT NULL,
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_account_seq ON events(account_id, seq);

CREATE TABLE IF NOT EXISTS webhooks (
  id           TEXT PRIMARY KEY,              -- wh_…; its secret is derived from the master secret
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  url          TEXT NOT NULL,
  events       TEXT NOT NULL,                 -- JSON array of event type names
  payload_mode TEXT NOT NULL DEFAULT 'default' CHECK (payload_mode IN ('default', 'text')),
  rules        TEXT,                          -- JSON { prefix?, captureInput?, kind? } or null
  status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at   INTEGER NOT NULL,
  created_seq  INTEGER NOT NULL DEFAULT 0,    -- unused, unwritten: dropping a column needs a migration
  disabled_at  INTEGER
);
CREATE INDEX IF NOT EXISTS webhooks_account ON webhooks(account_id, status);

-- Webhook deliveries: the outbox. A row is written in the same transaction as the event
-- (or rule match, or manual send) that causes it, so nothing saved goes unannounced; the scheduler
-- sends it after commit. One row per (subscription, event); retries reuse the row and its body.
CREATE TABLE IF NOT EXISTS deliveries (
  id               TEXT PRIMARY KEY,          -- dlv_…; webhook-id header; the text payload's stable id
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  webhook_id       TEXT NOT NULL REFERENCES webhooks(id),
  event_id         TEXT NOT NULL,             -- decimal events.seq, manual_…, or test_… (webhook.test)
  recording_id     TEXT NOT NULL,             -- '' for a webhook.test send, which is about no recording
  revision         INTEGER NOT NULL,          -- the revision the body describes (0: webhook.test)
  kind             TEXT NOT NULL CHECK (kind IN ('event', 'rule', 'manual')),
  -- Undecided capture rules are not deliveries yet: they wait in capture_evaluations.
  status           TEXT NOT NULL CHECK (status IN ('queued', 'delivered', 'failed', 'disabled')),
  body             TEXT,                      -- the exact bytes sent, stored before sending; null
                                              -- after deletion of the recording erased the text
  attempts         INTEGER NOT NULL DEFAULT 0, -- counted at claim time
  next_attempt_at  INTEGER,                   -- queued: due time (while leased: the lease expiry)
  locked_until     INTEGER,                   -- lease expiry of the claim in flight
  lease_token      TEXT,                      -- only the holder of this token may record the outcome
  last_status_code INTEGER,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  delivered_at     INTEGER,
  idempotency_key  TEXT                       -- manual sends: Idempotency-Key
);
-- The claim query: status = 'queued' AND next_attempt_at <= now ORDER BY next_attempt_at.
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX IF NOT EXISTS deliveries_webhook ON deliveries(webhook_id, status);
-- A subscription's delivery log, newest first (v1 GET /webhooks/{id}/deliveries): the implicit
-- rowid ends the index, so a (created_at, rowid) keyset page is read from it in order.
CREATE INDEX IF NOT EXISTS deliveries_webhook_log ON deliveries(webhook_id, created_at);
CREATE INDEX IF NOT EXISTS deliveries_recording ON deliveries(account_id, recording_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS deliveries_idempotency ON deliveries(account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- Every attempt, kept for diagnosis (also after the delivery failed for good). The row is written
-- at claim time; an attempt whose worker died keeps finished_at null until its lease is reclaimed.
CREATE TABLE IF NOT EXISTS delivery_attempts (
  delivery_id  TEXT NOT NULL REFERENCES deliveries(id),
  attempt      INTEGER NOT NULL,              -- 1-8
  lease_token  TEXT NOT NULL,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER,
  duration_ms  INTEGER,
  status_code  INTEGER,
  error        TEXT,                          -- null when the receiver answered 2xx
  PRIMARY KEY (delivery_id, attempt)
);
-- The per-minute claim limit counts attempts started in the last 60 s.
CREATE INDEX IF NOT EXISTS delivery_attempts_started ON delivery_attempts(started_at);

-- Capture-rule evaluations (text mode): one row per (native capture, rule subscription) whose
-- outcome is not decided yet. Created when the capture is admitted, for the rule
-- subscriptions active then (so a rule counts captures from its creation on); decided on the first
-- nonempty transcript and, for a captureInput condition, on the capture metadata; deleted once
-- decided (a delivery is queued, or the rule does not match). A row that waits for the capture
-- input holds the snapshot to send, so it is erased with the recording.
CREATE TABLE IF NOT EXISTS capture_evaluations (
  recording_id TEXT NOT NULL,
  webhook_id   TEXT NOT NULL REFERENCES webhooks(id),
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  status       TEXT NOT NULL CHECK (status IN ('pending_transcription', 'waiting_for_capture_input')),
  revision     INTEGER,                       -- waiting: the revision of the first nonempty transcript
  event_id     TEXT,                          -- waiting: its recording.transcript_ready event
  event_at     INTEGER,                       -- waiting: that event's time (the payload's createdAt)
  delivery_id  TEXT,                          -- waiting: the id the delivery will get (the payload's id)
  body         TEXT,                          -- waiting: the text payload snapshot to send
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (recording_id, webhook_id)
) WITHOUT ROWID;

-- ───────────────────────── recordings ─────────────────────────
-- The library. seq is the sort key of every listing and the FTS rowid:
--   seq = (2^43 - 1 - recorded_at) * 1024 + k,  k counting down from 1023 within one millisecond,
-- so "newest first, later created first" is ascending seq, a keyset cursor is one integer, and
-- FTS5 walks its index in exactly that order, stopping after one page. Ascending, because FTS5
-- reads a doclist fastest forwards: with secure-delete on, a backwards scan of a long doclist
-- cannot use the doclist index and walks all of it (at 1M recordings "the" took 13 ms descending,
-- 0.07 ms ascending). recorded_at is immutable, so seq never changes; recorded_at ≤ 2^43 - 1 keeps
-- seq below 2^53 (exact in JavaScript). Deleted recordings stay as tombstones (deleted_at set,
-- text, audio and the body hash erased) so that retried creates and later access answer 410.
-- The table's key is pos = -seq (schema 4), so that the rows and index entries of new captures,
-- the newest so far, go at the right end of each b-tree. SQLite packs pages full when rows are
-- appended at the right end, but when rows arrive at the left end it splits a page in two and the
-- halves left behind stay half empty: keyed by seq, the table took 2.14 bytes per byte of title +
-- transcript at 100,000 recordings (58% of each page used), keyed by pos 1.54, and the listing
-- indexes shrank by 45%. Lookups and ranges are by pos (pos = -?, ORDER BY pos DESC = newest first).
CREATE TABLE IF NOT EXISTS recordings (
  pos             INTEGER PRIMARY KEY,        -- = -seq
  seq             INTEGER NOT NULL,
  id              TEXT NOT NULL UNIQUE,       -- rec_…
  account_id      TEXT NOT NULL REFERENCES accounts(id),
  integration_id  TEXT NOT NULL,              -- the creator's integration identity (int_… or app)
  type            TEXT NOT NULL CHECK (type IN ('clip', 'memo')),
  title           TEXT NOT NULL DEFAULT '',
  transcript      TEXT NOT NULL DEFAULT '',
  summary         TEXT NOT NULL DEFAULT '',
  recorded_at     INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  revision        INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'transcribing', 'ready', 'no_speech', 'failed')),
  pinned          INTEGER NOT NULL DEFAULT 0,
  device_id       TEXT,
  external_id     TEXT,                       -- scoped to integration_id
  source          TEXT,                       -- v1 capture source
  capture_input   TEXT,                       -- v1 capture input (hold, doubleTap, …); immutable once set
  native          INTEGER NOT NULL DEFAULT 0, -- an app/device capture (session create with device or input)
  text_saved      INTEGER NOT NULL DEFAULT 1, -- 0: metadata-only pending capture, no recording.created yet
  processing_updated_at INTEGER,              -- v1 processing report: when and what the client said
  processing_message    TEXT,
  audio           TEXT NOT NULL DEFAULT '[]', -- JSON [{clientId, fileId, reportedAt}], memos only
  body_hash       TEXT NOT NULL,              -- sha256 of the canonical create body (idempotent replays)
  deleted_at      INTEGER,
  CHECK (pos = -seq)                          -- a row written by hand without its pos is refused
);
-- Listing indexes: each ends (implicitly) in pos, so an equality filter plus a pos range is read
-- in order (backwards: newest first) and a page costs its own size. Tombstones are left out.
CREATE INDEX IF NOT EXISTS recordings_account ON recordings(account_id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS recordings_account_type ON recordings(account_id, type) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS recordings_account_status ON recordings(account_id, status) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS recordings_account_device ON recordings(account_id, device_id) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS recordings_account_source ON recordings(account_id, source) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS recordings_external ON recordings(integration_id, external_id)
  WHERE external_id IS NOT NULL;

-- Idempotency keys of creates, per integration identity, kept as long as the recording (tombstones
-- included): an offline device may retry after days.
CREATE TABLE IF NOT EXISTS recording_keys (
  integration_id  TEXT NOT NULL,
  key             TEXT NOT NULL,
  recording_pos   INTEGER NOT NULL REFERENCES recordings(pos), -- the recording's pos (= -seq)
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (integration_id, key)
) WITHOUT ROWID;

-- Full-text index over title and transcript, external content keyed by seq. Only live recordings
-- with some text are indexed, and the index is exact at every commit. secure-delete makes a delete
-- or edit remove the old tokens from the index itself, so deleted text is gone from the index, not
-- just hidden. A prefix query is expanded through recording_terms into the whole words it starts
-- (src/services/search-plan.ts).
-- content_rowid is seq, which has no index of its own: FTS5 reads the content table only for
-- 'rebuild' and 'integrity-check'; a search joins its rowids to the table by pos = -rowid.
-- detail = none (schema 4): the index holds which recordings have a token, not where. The search
-- never needed more from it: a phrase is walked as the AND of its words and its word order tested
-- on the text of each candidate (src/services/search-plan.ts), and no query names a column. With
-- positions (detail = full) the index was 1.99 bytes per byte of title + transcript at 100,000
-- recordings; without them 1.02 (detail = column: 1.42).
-- No prefix index (schema 5; it was prefix = '3'): it was 43% of the index (1.02 → 0.59 bytes per
-- byte of text at 100,000 recordings), and FTS5's secure-delete looks every term of a deleted or
-- edited text up in every segment, prefixes included (~30 µs per segment and term): without it an
-- edit looks up about half as many. A prefix with too many forms to expand is tested on the text.
CREATE VIRTUAL TABLE IF NOT EXISTS recordings_fts USING fts5(
  title, transcript,
  content = 'recordings', content_rowid = 'seq',
  tokenize = 'unicode61 remove_diacritics 2',
  columnsize = 0,
  detail = none
);
INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('secure-delete', 1);
-- Inside writes, merge a level once it holds 8 segments instead of FTS5's default 4 (automerge):
-- every merge rewrites the text it merges, so a wider level means fewer rewrites of each
-- recording's postings over its life. Measured at 1M recordings: 376 µs of CPU per create with
-- 4, 262 µs with 8 (in process, 32 creates per commit). 16 was tried and dropped: creates through
-- the server were no faster and every search paid for the extra segments (rare-word pages ~35%
-- slower).
INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('automerge', 8);
-- While the server is idle, its 'merge' slices (src/services/index-merger.ts) merge any level of
-- four or more segments (usermerge 4, schema 7; schema 6 waited for 8, as automerge does), and
-- levels of two or more well below the largest segment (the fold: src/store/fts-structure.ts;
-- RecordingStore.mergeSlice sets usermerge 2 for one statement only). An edit or delete looks
-- each old word up in every segment, and so does a search: at 1M recordings an edit in process
-- took 52 ms p50 on the seeded index's 21 segments and 22 ms on 2. Not 2 for every level: FTS5
-- puts a merge's output on the next level up, where the largest segment may already be, so
-- merging every pair merged the whole index (~600 MB at 1M) with a few pages of new text after
-- every 2^4 quiet spells; with 4 that takes 4^4.
INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('usermerge', 4);
-- Index leaves of ~2,000 bytes instead of FTS5's ~4,000 (schema 6). Without positions a leaf of a
-- common word holds hundreds of rowids, and secure-delete finds the entry of an edited or deleted
-- recording by stepping through its leaf one rowid at a time, in every segment: ~60% of an edit's
-- commit at 1M recordings (perf). Halving the leaf halves the steps: an edit's commit at 1M (21
-- segments) took 36.8 ms p50 instead of 71.7, at 100,000 (9 segments) 14-15 instead of 19
-- (npm run bench:fts); the index grows ~2%. Segments written before schema 6 keep their leaves
-- until merged.
INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('pgsz', 2000);

-- New text is indexed once per transaction, not once per row. FTS5 writes its pending terms out
-- as a new index segment at every statement or savepoint boundary, so a trigger inserting into it
-- row by row leaves one segment per recording, and merging those segments back together was most
-- of the cost of a create at 1M recordings. Instead the triggers note the row here, and the writer
-- (src/db/writer.ts, RecordingStore.flushIndex) indexes every noted row with one INSERT … SELECT
-- just before COMMIT and empties the table: one segment per transaction, and between commits this
-- table is always empty. Invariant inside a transaction: a row noted here has no entry in the
-- index yet; any other live row with text is indexed with its current title and transcript.
CREATE TABLE IF NOT EXISTS recordings_fts_pending (
  seq INTEGER PRIMARY KEY
);

CREATE TRIGGER IF NOT EXISTS recordings_fts_note_insert AFTER INSERT ON recordings
  WHEN new.deleted_at IS NULL AND (new.title <> '' OR new.transcript <> '')
BEGIN
  INSERT OR IGNORE INTO recordings_fts_pending (seq) VALUES (new.seq);
END;
CREATE TRIGGER IF NOT EXISTS recordings_fts_note_update AFTER UPDATE OF title, transcript, deleted_at ON recordings
  WHEN old.title IS NOT new.title OR old.transcript IS NOT new.transcript OR old.deleted_at IS NOT new.deleted_at
BEGIN
  -- Indexed with the old text (not noted): take that out of the index now, while it is known.
  INSERT INTO recordings_fts (recordings_fts, rowid, title, transcript)
    SELECT 'delete', old.seq, old.title, old.transcript
    WHERE old.deleted_at IS NULL AND (old.title <> '' OR old.transcript <> '')
      AND NOT EXISTS (SELECT 1 FROM recordings_fts_pending WHERE seq = old.seq);
  INSERT OR IGNORE INTO recordings_fts_pending (seq)
    SELECT new.seq WHERE new.deleted_at IS NULL AND (new.title <> '' OR new.transcript <> '');
  DELETE FROM recordings_fts_pending
    WHERE seq = new.seq AND NOT (new.deleted_at IS NULL AND (new.title <> '' OR new.transcript <> ''));
END;
CREATE TRIGGER IF NOT EXISTS recordings_fts_note_delete AFTER DELETE ON recordings
  WHEN old.deleted_at IS NULL AND (old.title <> '' OR old.transcript <> '')
BEGIN
  INSERT INTO recordings_fts (recordings_fts, rowid, title, transcript)
    SELECT 'delete', old.seq, old.title, old.transcript
    WHERE NOT EXISTS (SELECT 1 FROM recordings_fts_pending WHERE seq = old.seq);
  DELETE FROM recordings_fts_pending WHERE seq = old.seq;
END;

-- The word forms of indexed text (lower-cased, and also with diacritics removed), a superset of the
-- FTS vocabulary: a prefix query is rewritten into an OR of the few indexed words it is a prefix of, which FTS5 evaluates lazily in rowid order instead
-- of materialising every match first. A form leaves when a delete or edit removes the last live
-- text that has it, so deleted text does not survive here.
CREATE TABLE IF NOT EXISTS recording_terms (
  term TEXT PRIMARY KEY
) WITHOUT ROWID;
