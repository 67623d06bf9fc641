-- Knowledge: documents, their chunks (text + embedding), a per-site FTS5 index over the chunks, a per-site
-- generation counter (bumped by every change, so a server notices a CLI import cheaply) and the
-- query log. Every table carries site_id and every query filters by it.
CREATE TABLE kb_documents (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    source       TEXT NOT NULL,
    title        TEXT NOT NULL,
    url          TEXT,
    format       TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunk_count  INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (site_id, source)
) STRICT;
-- The rowid is the chunk's key in the FTS index and in the site's usearch index.
CREATE TABLE kb_chunks (
    rowid       INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
    ord         INTEGER NOT NULL,
    heading     TEXT NOT NULL,
    text        TEXT NOT NULL,
    embedding   BLOB NOT NULL
) STRICT;
CREATE INDEX kb_chunks_by_site ON kb_chunks(site_id, rowid);
CREATE INDEX kb_chunks_by_document ON kb_chunks(document_id);
-- Full-text search lives in one contentless FTS5 table per site (kb_fts_<site uuid hex>, created on
-- first import by the store): BM25 statistics are the site's own and a query needs no join to filter
-- by site. Rows are keyed by kb_chunks.rowid.
CREATE TABLE kb_generations (
    site_id    TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    generation INTEGER NOT NULL
) STRICT;
CREATE TABLE query_log (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    question     TEXT NOT NULL,
    lang         TEXT NOT NULL,
    resolved     INTEGER NOT NULL,
    source_count INTEGER NOT NULL,
    latency_ms   INTEGER NOT NULL,
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX query_log_by_site ON query_log(site_id, created_at);
