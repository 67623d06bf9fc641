CREATE TABLE sites (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    vertical           TEXT NOT NULL,
    tier               TEXT NOT NULL CHECK (tier IN ('starter', 'pro', 'enterprise')),
    currency           TEXT NOT NULL,
    lang               TEXT NOT NULL,
    enabled            INTEGER NOT NULL DEFAULT 1,
    webhook_url        TEXT,
    webhook_events     TEXT NOT NULL DEFAULT 'lead.captured',
    webhook_disabled_at TEXT,
    token_hash         BLOB UNIQUE,
    secret_sealed      BLOB NOT NULL,
    prev_secret_sealed BLOB,
    prev_secret_until  TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
) STRICT;
CREATE TABLE site_origins (
    site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    origin  TEXT NOT NULL,
    PRIMARY KEY (site_id, origin)
) STRICT, WITHOUT ROWID;
CREATE INDEX site_origins_by_origin ON site_origins(origin);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
