-- The assistant on the page: conversations (the last turns of a visitor's page session), ratings of
-- answers, widget analytics (raw events for a bounded time, and per-site daily counts that stay cheap at
-- millions of events) and each site's widget settings. Every table carries site_id; times are unix ms.
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX conversations_by_site ON conversations(site_id, updated_at);
CREATE TABLE conversation_turns (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text            TEXT NOT NULL,
    query_id        TEXT,
    at              INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
) STRICT, WITHOUT ROWID;
ALTER TABLE query_log ADD COLUMN conversation_id TEXT;
ALTER TABLE leads ADD COLUMN conversation_id TEXT;
CREATE TABLE feedback (
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    query_id   TEXT NOT NULL,
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    comment    TEXT,
    at         INTEGER NOT NULL,
    PRIMARY KEY (site_id, query_id)
) STRICT, WITHOUT ROWID;
CREATE TABLE widget_events (
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    at         INTEGER NOT NULL,
    query_id   TEXT,
    url        TEXT
) STRICT;
CREATE INDEX widget_events_by_site ON widget_events(site_id, at);
CREATE TABLE widget_event_counts (
    site_id TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    day     INTEGER NOT NULL,             -- unix ms of 00:00 UTC
    type    TEXT NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (site_id, day, type)
) STRICT, WITHOUT ROWID;
ALTER TABLE sites ADD COLUMN widget_color TEXT NOT NULL DEFAULT '#0b5fff';
ALTER TABLE sites ADD COLUMN widget_position TEXT NOT NULL DEFAULT 'bottom-right' CHECK (widget_position IN ('bottom-right', 'bottom-left'));
ALTER TABLE sites ADD COLUMN widget_greetings TEXT NOT NULL DEFAULT '{}';  -- JSON {lang: text}
ALTER TABLE sites ADD COLUMN lead_form INTEGER NOT NULL DEFAULT 1 CHECK (lead_form IN (0, 1));
