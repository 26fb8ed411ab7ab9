-- Up Migration
-- Feedback keeps who can be answered (the submitter's email, from the body or the identity provider's
-- claim at the time) and where operators stand with it: new → seen → done (any order; set by operators).
ALTER TABLE feedback
  ADD COLUMN submitter_email text CHECK (submitter_email IS NULL OR length(submitter_email) BETWEEN 3 AND 320),
  ADD COLUMN status text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'seen', 'done')),
  ADD COLUMN status_changed_at timestamptz,
  ADD COLUMN status_changed_by text;
CREATE INDEX feedback_status_idx ON feedback (status, created_at DESC, id DESC);

-- Down Migration
DROP INDEX feedback_status_idx;
ALTER TABLE feedback DROP COLUMN submitter_email, DROP COLUMN status, DROP COLUMN status_changed_at, DROP COLUMN status_changed_by;
