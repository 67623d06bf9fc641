-- Webhook endpoints (issue #11): an endpoint is a site's webhook URL. Its health is kept per site: how
-- many attempts in a row failed, since when, and until when its events are not claimed (exponential
-- backoff); an endpoint failing continuously for `webhooks.disable_after` is disabled
-- (`sites.webhook_disabled_at`, as after a 410). No row means healthy. Setting the URL or
-- `webhooks enable` deletes the row.
CREATE TABLE webhook_endpoints (
    site_id              TEXT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    failing_since        INTEGER,
    retry_at             INTEGER,
    last_error           TEXT,
    last_attempt_at      INTEGER,
    last_success_at      INTEGER
) STRICT;

-- The owner of a lease: a random token written at claim. Recording a result needs it, so a worker whose
-- lease expired (and whose event another worker claimed since) cannot overwrite the newer state.
ALTER TABLE outbox ADD COLUMN lease_token TEXT;
-- Events leased now, counted per endpoint at every claim.
CREATE INDEX outbox_leased ON outbox(site_id, lease_until) WHERE lease_token IS NOT NULL;
