-- A repeated Idempotency-Key must come with the same request: the first request's SHA-256 is kept with
-- the key, and a different body under the same key is refused (422 idempotency_key_reused). Keys stored
-- before this have no hash and replay as before.
ALTER TABLE idempotency_keys ADD COLUMN request_hash TEXT;
