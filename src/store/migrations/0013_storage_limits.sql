-- What anonymous traffic stored per site and UTC day, so the daily caps (`limits.leads_per_site_per_day`,
-- `limits.logged_questions_per_site_per_day`) are checked in the transaction that writes the row and
-- hold across restarts. `unlogged_questions` counts questions answered but not logged because the cap
-- was reached, so a site's figures stay honest. `day` is midnight UTC in unix milliseconds.
CREATE TABLE daily_usage (
    site_id            TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    day                INTEGER NOT NULL,
    leads              INTEGER NOT NULL DEFAULT 0,
    logged_questions   INTEGER NOT NULL DEFAULT 0,
    unlogged_questions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, day)
) STRICT;
