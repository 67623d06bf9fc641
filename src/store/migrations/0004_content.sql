-- Public content: verticals, their landing pages, price lists and the currency rates prices convert by.
CREATE TABLE verticals (
    slug             TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    default_lang     TEXT NOT NULL,
    default_currency TEXT NOT NULL,
    langs            TEXT NOT NULL,             -- comma separated canonical tags, default first
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) STRICT;
CREATE TABLE landing_pages (
    vertical    TEXT NOT NULL REFERENCES verticals(slug) ON DELETE CASCADE,
    lang        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    type        TEXT NOT NULL CHECK (type IN ('home', 'feature', 'use-case', 'comparison', 'faq', 'pricing', 'article')),
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,                  -- JSON {faq, features, stats, alternates}
    published   INTEGER NOT NULL DEFAULT 0 CHECK (published IN (0, 1)),
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (vertical, lang, slug)
) STRICT, WITHOUT ROWID;
-- The sitemap reads published pages of one vertical in (lang, type, slug) order straight off this index.
CREATE INDEX landing_pages_sitemap ON landing_pages(vertical, published, lang, type, slug);
CREATE TABLE pricing_tiers (
    vertical            TEXT NOT NULL REFERENCES verticals(slug) ON DELETE CASCADE,
    id                  TEXT NOT NULL,
    position            INTEGER NOT NULL,
    currency            TEXT NOT NULL,          -- the base currency of amount_minor
    amount_minor        INTEGER NOT NULL CHECK (amount_minor >= 0),
    interval            TEXT NOT NULL CHECK (interval IN ('month', 'year')),
    requests_per_minute INTEGER NOT NULL CHECK (requests_per_minute > 0),
    highlighted         INTEGER NOT NULL CHECK (highlighted IN (0, 1)),
    i18n                TEXT NOT NULL,          -- JSON {lang: {name, description, features}}
    updated_at          TEXT NOT NULL,
    PRIMARY KEY (vertical, id)
) STRICT, WITHOUT ROWID;
-- One unit of `reference` is worth `rate` units of `currency`; `rate` is an exact decimal string.
CREATE TABLE currency_rates (
    reference  TEXT NOT NULL,
    currency   TEXT NOT NULL,
    rate       TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (reference, currency)
) STRICT, WITHOUT ROWID;
