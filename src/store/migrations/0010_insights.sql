-- Operator insights and curated answers.
-- Each answered question records the score of its best source and the documents it cited, so the
-- operator can list weak answers and the most cited sources (`sitebot insights`).
ALTER TABLE query_log ADD COLUMN top_score REAL;
CREATE TABLE query_sources (
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    query_id    TEXT NOT NULL,
    rank        INTEGER NOT NULL,            -- 1 = the first source
    document_id TEXT NOT NULL,               -- doc_... or ans_... (a curated answer)
    title       TEXT NOT NULL,
    url         TEXT,
    score       REAL NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (site_id, query_id, rank)
) STRICT, WITHOUT ROWID;
CREATE INDEX query_sources_by_time ON query_sources(site_id, created_at);
-- Answers the operator wrote for a question (`sitebot knowledge answer add`): a question that matches
-- one closely gets its text. The question's embedding is kept with the fingerprint of the model that
-- made it, like a chunk's.
CREATE TABLE curated_answers (
    id         TEXT PRIMARY KEY,             -- ans_<ulid>
    site_id    TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    question   TEXT NOT NULL,
    answer     TEXT NOT NULL,
    url        TEXT,
    embedding  BLOB NOT NULL,
    model      TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX curated_answers_by_site ON curated_answers(site_id, model);
