-- The widget editor (#25): a site's published suggested questions, and the draft the console edits.
-- The widget's other published settings stay in `sites` (colour, position, greetings, contact form) and
-- `site_origins`; publishing copies the draft there and into `questions` in one transaction.
CREATE TABLE site_widgets (
    site_id   TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    questions TEXT NOT NULL DEFAULT '{}',  -- published: JSON {lang: [question, ...]}
    draft     TEXT,                        -- JSON of the draft; NULL: nothing unpublished
    draft_at  INTEGER,                     -- when the draft was last saved (unix ms)
    draft_by  TEXT                         -- who saved it (the console user's e-mail)
) STRICT;
