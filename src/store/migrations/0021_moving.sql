-- A site being moved to another node (`sitebot site export`): from this instant its writes are refused
-- (leads answer 503 with Retry-After, questions are answered but not logged) and its webhook events are
-- left to the node it moves to. NULL: the site is served here as usual.
ALTER TABLE sites ADD COLUMN moving_since INTEGER;
