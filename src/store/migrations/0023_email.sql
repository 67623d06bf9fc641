-- #25 email: the e-mail queue (setup links, the weekly digest, lead e-mails), delivered by email::Worker
-- as webhooks are from the outbox: a row is written in the transaction that causes it, claimed with a
-- lease, sent, then marked sent or given its next attempt. msg_id is the Message-ID's unique part, made
-- when the row is written, so a message sent again after a crash is recognisably the same one.
CREATE TABLE email_queue (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL CHECK (kind IN ('setup_link', 'digest', 'lead')),
    site_id     TEXT REFERENCES sites(id) ON DELETE CASCADE,
    lead_id     TEXT REFERENCES leads(id) ON DELETE CASCADE,   -- a lead e-mail: erasing the lead drops it
    recipient   TEXT NOT NULL,
    payload     TEXT NOT NULL DEFAULT '{}',                     -- JSON: the link, or the digest's figures
    msg_id      TEXT NOT NULL UNIQUE,
    state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'dead')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     INTEGER NOT NULL,
    lease_until INTEGER,
    lease_token TEXT,
    last_error  TEXT,
    created_at  INTEGER NOT NULL,
    sent_at     INTEGER
) STRICT;
CREATE INDEX email_queue_due ON email_queue(state, next_at) WHERE state = 'queued';
CREATE INDEX email_queue_by_lead ON email_queue(lead_id) WHERE lead_id IS NOT NULL;
CREATE INDEX email_queue_by_site ON email_queue(site_id) WHERE site_id IS NOT NULL;
-- Who wants the weekly digest (owners get it unless they turn it off), and which sites e-mail their
-- owners each new lead (off until asked for).
ALTER TABLE console_users ADD COLUMN digest INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sites ADD COLUMN lead_email INTEGER NOT NULL DEFAULT 0;
