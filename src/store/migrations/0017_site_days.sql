-- Per-site, per-UTC-day counters behind the console's dashboards, bumped in the transaction that stores
-- what they count, so a dashboard reads at most a few hundred rows whatever the size of the query log.
-- Like the public-stats counters they outlive the rows they count (retention keeps them).
CREATE TABLE site_days (
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    day         INTEGER NOT NULL,                      -- UTC midnight, unix ms
    questions   INTEGER NOT NULL DEFAULT 0,
    answered    INTEGER NOT NULL DEFAULT 0,
    leads       INTEGER NOT NULL DEFAULT 0,
    thumbs_up   INTEGER NOT NULL DEFAULT 0,
    thumbs_down INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, day)
) STRICT, WITHOUT ROWID;
CREATE TABLE site_day_langs (
    site_id   TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    day       INTEGER NOT NULL,
    lang      TEXT NOT NULL,
    questions INTEGER NOT NULL,
    PRIMARY KEY (site_id, day, lang)
) STRICT, WITHOUT ROWID;
CREATE TABLE site_day_sources (
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    day         INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    title       TEXT NOT NULL,
    url         TEXT,
    citations   INTEGER NOT NULL,
    PRIMARY KEY (site_id, day, document_id)
) STRICT, WITHOUT ROWID;
-- What is already logged, counted once.
INSERT INTO site_days (site_id, day, questions, answered)
    SELECT site_id, (created_at / 86400000) * 86400000, count(*), sum(resolved) FROM query_log GROUP BY 1, 2;
INSERT INTO site_days (site_id, day, leads)
    SELECT site_id, (created_at / 86400000) * 86400000, count(*) FROM leads WHERE true GROUP BY 1, 2
    ON CONFLICT (site_id, day) DO UPDATE SET leads = excluded.leads;
INSERT INTO site_days (site_id, day, thumbs_up, thumbs_down)
    SELECT site_id, (at / 86400000) * 86400000, sum(rating = 'up'), sum(rating = 'down') FROM feedback WHERE true GROUP BY 1, 2
    ON CONFLICT (site_id, day) DO UPDATE SET thumbs_up = excluded.thumbs_up, thumbs_down = excluded.thumbs_down;
INSERT INTO site_day_langs (site_id, day, lang, questions)
    SELECT site_id, (created_at / 86400000) * 86400000, lang, count(*) FROM query_log GROUP BY 1, 2, 3;
INSERT INTO site_day_sources (site_id, day, document_id, title, url, citations)
    SELECT site_id, (created_at / 86400000) * 86400000, document_id, max(title), max(url), count(*) FROM query_sources GROUP BY 1, 2, 3;
-- The lead.captured event of each lead (the console shows its deliveries), found for earlier leads in
-- the outbox that still holds them.
ALTER TABLE leads ADD COLUMN message_id TEXT;
UPDATE leads SET message_id = (
    SELECT o.id FROM outbox o WHERE o.site_id = leads.site_id AND o.event_type = 'lead.captured' AND json_extract(o.payload, '$.data.leadId') = leads.id
);
CREATE INDEX leads_by_site_newest ON leads(site_id, created_at DESC, id DESC);
