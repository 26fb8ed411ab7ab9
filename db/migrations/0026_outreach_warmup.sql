-- Up Migration
-- Mailbox warm-up: the day it was switched on (its ramp counts local days from it) and the shape of the
-- ramp, from `warmup_start_per_day` on day 1 up to the daily limit on day `warmup_days`.
ALTER TABLE outreach_mailboxes
  ADD COLUMN warmup_started_at timestamptz,
  ADD COLUMN warmup_start_per_day integer NOT NULL DEFAULT 5 CHECK (warmup_start_per_day BETWEEN 1 AND 2000),
  ADD COLUMN warmup_days integer NOT NULL DEFAULT 14 CHECK (warmup_days BETWEEN 1 AND 90);

-- Mailboxes already warming up count from their creation, the earliest warm-up could have begun.
UPDATE outreach_mailboxes SET warmup_started_at = created_at WHERE warmup_enabled;

-- Down Migration
ALTER TABLE outreach_mailboxes DROP COLUMN warmup_started_at, DROP COLUMN warmup_start_per_day, DROP COLUMN warmup_days;
