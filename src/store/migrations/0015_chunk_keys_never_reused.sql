-- A chunk's rowid is its key in the site's FTS5 table and vector index, and a running server syncs its
-- vector index by comparing key sets. Without AUTOINCREMENT SQLite gives a new row the largest rowid plus
-- one, so replacing the most recently imported document gave its new chunks the keys of the deleted
-- ones, and the index kept the old vectors under them until a restart. AUTOINCREMENT never reuses a key.
-- The table is rebuilt with every row keeping its rowid, so the FTS5 tables and the index files stay valid.
CREATE TABLE kb_chunks_new (
    rowid       INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
    ord         INTEGER NOT NULL,
    heading     TEXT NOT NULL,
    text        TEXT NOT NULL,
    embedding   BLOB NOT NULL,
    model       TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO kb_chunks_new (rowid, id, site_id, document_id, ord, heading, text, embedding, model)
    SELECT rowid, id, site_id, document_id, ord, heading, text, embedding, model FROM kb_chunks;
DROP TABLE kb_chunks;
ALTER TABLE kb_chunks_new RENAME TO kb_chunks;
CREATE INDEX kb_chunks_by_site ON kb_chunks(site_id, rowid);
CREATE INDEX kb_chunks_by_document ON kb_chunks(document_id);
CREATE INDEX kb_chunks_by_model ON kb_chunks(site_id, model);
