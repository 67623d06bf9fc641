-- The console at a million logged questions (#24's benchmark).
-- The review queue lists a site's answers rated down in the last 30 days, newest first: read by time
-- instead of through every rating the site has.
CREATE INDEX feedback_by_site_time ON feedback(site_id, at);
-- Citations per document and week (weeks start on Monday, UTC) beside the days: a 90-day dashboard's most
-- cited documents read whole weeks from here and only the days at either end from site_day_sources,
-- about a quarter of the rows. Bumped with the day rows; like them, kept by retention.
CREATE TABLE site_week_sources (
    site_id     TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    week        INTEGER NOT NULL,                      -- the week's Monday, UTC midnight, unix ms
    document_id TEXT NOT NULL,
    title       TEXT NOT NULL,
    url         TEXT,
    citations   INTEGER NOT NULL,
    PRIMARY KEY (site_id, week, document_id)
) STRICT, WITHOUT ROWID;
-- 1970-01-01 was a Thursday: a day's Monday is 3 days before the day count's multiple of 7 past it.
INSERT INTO site_week_sources (site_id, week, document_id, title, url, citations)
    SELECT site_id, ((day / 86400000) - ((day / 86400000) + 3) % 7) * 86400000, document_id, max(title), max(url), sum(citations)
    FROM site_day_sources GROUP BY 1, 2, 3;
