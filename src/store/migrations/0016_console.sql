-- The console: the people who run sites (users), what each may do on which site (grants), one-time
-- setup links, server-side sessions, and the audit log of every change and account event.
CREATE TABLE console_users (
    id            TEXT PRIMARY KEY,                    -- usr_<ULID>
    email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT,                                -- Argon2id PHC string; NULL until a setup link is used
    is_admin      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    password_at   INTEGER                              -- when the password was last set
) STRICT;
CREATE TABLE console_grants (
    user_id TEXT NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
    site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    role    TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    PRIMARY KEY (user_id, site_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX console_grants_by_site ON console_grants(site_id);
CREATE TABLE console_setup_links (
    token_hash BLOB PRIMARY KEY,                       -- SHA-256 of the link's token
    user_id    TEXT NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) STRICT;
CREATE TABLE console_sessions (
    id_hash      BLOB PRIMARY KEY,                     -- SHA-256 of the cookie's value
    user_id      TEXT NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
    csrf         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) STRICT;
CREATE INDEX console_sessions_by_user ON console_sessions(user_id);
CREATE TABLE audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,
    actor   TEXT NOT NULL,                             -- a user's e-mail, or `cli`
    site_id TEXT,                                      -- NULL for account events
    action  TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT '{}'                 -- JSON, short: what changed
) STRICT;
CREATE INDEX audit_log_by_site ON audit_log(site_id, id);
-- The review queue: unanswered questions grouped by meaning as they are logged (store::review).
CREATE TABLE review_groups (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,                         -- the fingerprint of the model that embedded its questions
    centroid    BLOB NOT NULL,                         -- f32 little-endian, unit length
    count       INTEGER NOT NULL,
    example     TEXT NOT NULL,                         -- the newest wording
    first_at    INTEGER NOT NULL,
    last_at     INTEGER NOT NULL,
    handled_at  INTEGER,
    handled_how TEXT CHECK (handled_how IN ('curated', 'reviewed')),
    handled_by  TEXT
) STRICT;
CREATE INDEX review_groups_open ON review_groups(site_id, handled_at, count DESC, last_at DESC, id DESC);
ALTER TABLE query_log ADD COLUMN review_group INTEGER;
CREATE INDEX query_log_by_review_group ON query_log(site_id, review_group, created_at) WHERE review_group IS NOT NULL;
