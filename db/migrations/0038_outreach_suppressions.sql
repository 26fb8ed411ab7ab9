-- Up Migration
-- The organization's suppression list: addresses no sequence ever mails again (a hard bounce, an
-- unsubscribe, a complaint, or added by hand). One row per address, compared case-insensitively.
CREATE TABLE outreach_suppressions (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
  reason text NOT NULL CHECK (reason IN ('bounce', 'unsubscribe', 'complaint', 'manual')),
  note text CHECK (note IS NULL OR length(note) <= 500),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX outreach_suppressions_email_idx ON outreach_suppressions (org_id, lower(email));
CREATE INDEX outreach_suppressions_list_idx ON outreach_suppressions (org_id, created_at DESC, id DESC);

ALTER TABLE outreach_enrollments DROP CONSTRAINT outreach_enrollments_status_check;
ALTER TABLE outreach_enrollments ADD CONSTRAINT outreach_enrollments_status_check
  CHECK (status IN ('active', 'completed', 'replied', 'bounced', 'removed', 'failed', 'suppressed'));

-- Down Migration
ALTER TABLE outreach_enrollments DROP CONSTRAINT outreach_enrollments_status_check;
ALTER TABLE outreach_enrollments ADD CONSTRAINT outreach_enrollments_status_check
  CHECK (status IN ('active', 'completed', 'replied', 'bounced', 'removed', 'failed'));
DROP TABLE outreach_suppressions;
