-- Crawled websites: one row per crawl source (a start URL of a site), with its schedule and a lease so
-- that two processes never crawl one source at once; one row per crawled page URL, with what a
-- conditional re-fetch needs (ETag, Last-Modified), the document it became and its outgoing links (a
-- 304 has no body to read them from). Times are INTEGER unix milliseconds.
CREATE TABLE crawl_sources (
    site_id      TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    url          TEXT NOT NULL,
    -- JSON: max_pages, max_depth, include, exclude
    options      TEXT NOT NULL,
    -- NULL: crawled when the operator asks, never by the server
    every_ms     INTEGER,
    next_sync_at INTEGER,
    lease_until  INTEGER,
    -- host:pid of the process holding the lease
    lease_owner  TEXT,
    last_sync_at INTEGER,
    -- JSON: the last crawl's summary
    last_summary TEXT,
    last_error   TEXT,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (site_id, url)
) STRICT;
CREATE INDEX crawl_sources_due ON crawl_sources(next_sync_at) WHERE every_ms IS NOT NULL;
CREATE TABLE crawl_pages (
    site_id       TEXT NOT NULL,
    source_url    TEXT NOT NULL,
    url           TEXT NOT NULL,
    -- the canonical URL: the source of the document this page became (NULL: none, e.g. noindex)
    document      TEXT,
    etag          TEXT,
    last_modified TEXT,
    -- JSON array of the page's same-host links, cleaned
    links         TEXT NOT NULL,
    fetched_at    INTEGER NOT NULL,
    PRIMARY KEY (site_id, url),
    FOREIGN KEY (site_id, source_url) REFERENCES crawl_sources(site_id, url) ON DELETE CASCADE
) STRICT;
CREATE INDEX crawl_pages_by_source ON crawl_pages(site_id, source_url);
