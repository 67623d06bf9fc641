-- Live hand-off (issue #26): a person of the site's staff takes over a conversation from the assistant.
--
-- Per site: hand-off on or off, opening hours (a weekly schedule and closed dates, read in an IANA time
-- zone) and how long a visitor waits for a person before the contact form is offered.
ALTER TABLE sites ADD COLUMN handoff INTEGER NOT NULL DEFAULT 0 CHECK (handoff IN (0, 1));
ALTER TABLE sites ADD COLUMN handoff_hours TEXT NOT NULL DEFAULT '';        -- WeeklyHours, canonical; '' = always
ALTER TABLE sites ADD COLUMN handoff_closed TEXT NOT NULL DEFAULT '';       -- ClosedDates, YYYY-MM-DD,...
ALTER TABLE sites ADD COLUMN handoff_timezone TEXT NOT NULL DEFAULT 'UTC';  -- IANA name
ALTER TABLE sites ADD COLUMN handoff_wait_secs INTEGER NOT NULL DEFAULT 120;
-- Per conversation: the SHA-256 of its token (256 random bits, given once with its first answer), and
-- where its hand-off is: `none` (the assistant answers), `waiting` (for a person, until
-- handoff_deadline) or `held` (by holder).
ALTER TABLE conversations ADD COLUMN token_hash BLOB;
ALTER TABLE conversations ADD COLUMN handoff TEXT NOT NULL DEFAULT 'none' CHECK (handoff IN ('none', 'waiting', 'held'));
ALTER TABLE conversations ADD COLUMN handoff_requested_at INTEGER;
ALTER TABLE conversations ADD COLUMN handoff_deadline INTEGER;
ALTER TABLE conversations ADD COLUMN handoff_replied INTEGER NOT NULL DEFAULT 0;   -- a person wrote since the request
ALTER TABLE conversations ADD COLUMN holder TEXT REFERENCES console_users(id) ON DELETE SET NULL;
CREATE INDEX conversations_waiting ON conversations(handoff_deadline) WHERE handoff = 'waiting';
CREATE INDEX conversations_with_person ON conversations(site_id, handoff, handoff_requested_at) WHERE handoff <> 'none';
-- What a visitor's event stream carries, written in the transaction of the change it tells: state
-- changes and the messages between visitor and staff. `id` is the stream's event id (never given again,
-- so Last-Event-ID resumes exactly).
CREATE TABLE conversation_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id         TEXT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('state', 'message')),
    state           TEXT CHECK (state IN ('waiting', 'joined', 'handed_back', 'closed', 'missed')),
    role            TEXT CHECK (role IN ('user', 'staff')),
    user_id         TEXT,                                  -- the staff member (not shown to visitors)
    author          TEXT,                                  -- the staff member's display name, as shown
    text            TEXT,
    at              INTEGER NOT NULL
) STRICT;
CREATE INDEX conversation_events_by_conversation ON conversation_events(conversation_id, id);
-- The name visitors see when a person joins; the e-mail address is never shown to them.
ALTER TABLE console_users ADD COLUMN display_name TEXT;
