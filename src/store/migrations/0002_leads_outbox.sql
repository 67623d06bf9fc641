CREATE TABLE leads (
    id         TEXT PRIMARY KEY,
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    name       TEXT,
    email      TEXT NOT NULL,
    message    TEXT,
    page_url   TEXT,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX leads_by_site ON leads(site_id, created_at);
CREATE TABLE idempotency_keys (
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    route      TEXT NOT NULL,
    key        TEXT NOT NULL,
    status     INTEGER NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (site_id, route, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at);
CREATE TABLE outbox (
    id              TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    event_type      TEXT NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    delivered_at    TEXT
) STRICT;
CREATE INDEX outbox_due ON outbox(status, next_attempt_at);
CREATE INDEX outbox_by_site ON outbox(site_id, status);
CREATE TABLE outbox_attempts (
    message_id  TEXT NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          TEXT NOT NULL,
    status_code INTEGER,
    error       TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (message_id, attempt)
) STRICT;
CREATE TABLE site_stats (
    site_id            TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    questions          INTEGER NOT NULL DEFAULT 0,
    resolved_questions INTEGER NOT NULL DEFAULT 0,
    leads              INTEGER NOT NULL DEFAULT 0,
    active_since       TEXT
) STRICT;
