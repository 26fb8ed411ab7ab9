-- Up Migration
-- Received mail that tells the truth: a delivery report is read per recipient (RFC 3464), a temporary
-- failure is a soft bounce that does not end the sequence, and an automatic answer pauses the enrollment.

-- What a delivery report said, on the report itself and on the message it reports on: its status code
-- (`4.2.2`), action (`delayed`, `failed`) and the remote server's words. The reported message also counts
-- the soft bounces it received.
ALTER TABLE outreach_messages
  ADD COLUMN delivery_status text CHECK (delivery_status IS NULL OR length(delivery_status) <= 20),
  ADD COLUMN delivery_action text CHECK (delivery_action IS NULL OR length(delivery_action) <= 40),
  ADD COLUMN delivery_diagnostic text CHECK (delivery_diagnostic IS NULL OR length(delivery_diagnostic) <= 500),
  ADD COLUMN soft_bounces integer NOT NULL DEFAULT 0 CHECK (soft_bounces >= 0);
ALTER TABLE outreach_messages DROP CONSTRAINT outreach_messages_classification_check;
ALTER TABLE outreach_messages ADD CONSTRAINT outreach_messages_classification_check
  CHECK (classification IN ('interested', 'not_interested', 'out_of_office', 'auto_reply', 'bounce', 'soft_bounce', 'other'));
-- Soft bounces of one address within a window (the suppression threshold's count).
CREATE INDEX outreach_messages_soft_bounce_idx ON outreach_messages (org_id, received_at) WHERE classification = 'soft_bounce';

-- Why an active enrollment waits, and until when (an out-of-office answer).
ALTER TABLE outreach_enrollments
  ADD COLUMN paused_until timestamptz,
  ADD COLUMN pause_reason text CHECK (pause_reason IN ('out_of_office', 'auto_reply')),
  ADD CONSTRAINT outreach_enrollments_pause_check CHECK ((paused_until IS NULL) = (pause_reason IS NULL));

-- Repeated soft bounces of one address suppress it, saying so.
ALTER TABLE outreach_suppressions DROP CONSTRAINT outreach_suppressions_reason_check;
ALTER TABLE outreach_suppressions ADD CONSTRAINT outreach_suppressions_reason_check
  CHECK (reason IN ('bounce', 'soft_bounce', 'unsubscribe', 'complaint', 'manual'));

-- Down Migration
UPDATE outreach_suppressions SET reason = 'bounce' WHERE reason = 'soft_bounce';
ALTER TABLE outreach_suppressions DROP CONSTRAINT outreach_suppressions_reason_check;
ALTER TABLE outreach_suppressions ADD CONSTRAINT outreach_suppressions_reason_check
  CHECK (reason IN ('bounce', 'unsubscribe', 'complaint', 'manual'));
ALTER TABLE outreach_enrollments DROP CONSTRAINT outreach_enrollments_pause_check, DROP COLUMN pause_reason, DROP COLUMN paused_until;
DROP INDEX outreach_messages_soft_bounce_idx;
UPDATE outreach_messages SET classification = 'other' WHERE classification = 'soft_bounce';
ALTER TABLE outreach_messages DROP CONSTRAINT outreach_messages_classification_check;
ALTER TABLE outreach_messages ADD CONSTRAINT outreach_messages_classification_check
  CHECK (classification IN ('interested', 'not_interested', 'out_of_office', 'auto_reply', 'bounce', 'other'));
ALTER TABLE outreach_messages DROP COLUMN soft_bounces, DROP COLUMN delivery_diagnostic, DROP COLUMN delivery_action, DROP COLUMN delivery_status;
