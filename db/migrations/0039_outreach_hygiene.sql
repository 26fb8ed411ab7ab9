-- Up Migration
-- Sending hygiene and analytics of outreach sequences.

-- The one-click unsubscribe capability of an enrollment (RFC 8058): 256 random bits as hex, named in
-- the List-Unsubscribe header of every step; the address behind it is looked up by this token alone.
ALTER TABLE outreach_enrollments
  ADD COLUMN unsubscribe_token text NOT NULL DEFAULT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''),
  ADD COLUMN unsubscribed_at timestamptz;
CREATE UNIQUE INDEX outreach_enrollments_unsubscribe_token_idx ON outreach_enrollments (unsubscribe_token);

-- What a received message says (domain/outreach-replies.ts): set when it is stored.
ALTER TABLE outreach_messages
  ADD COLUMN classification text CHECK (classification IN ('interested', 'not_interested', 'out_of_office', 'auto_reply', 'bounce', 'other'));
UPDATE outreach_messages SET classification = CASE kind WHEN 'bounce' THEN 'bounce' ELSE 'other' END WHERE direction = 'inbound';
CREATE INDEX outreach_messages_enrollment_idx ON outreach_messages (org_id, enrollment_id) WHERE enrollment_id IS NOT NULL;

-- Spacing between two sends of one mailbox: a random gap in [min, max] seconds, drawn at each send.
ALTER TABLE outreach_mailboxes
  ADD COLUMN send_gap_min_seconds integer NOT NULL DEFAULT 60 CHECK (send_gap_min_seconds BETWEEN 0 AND 86400),
  ADD COLUMN send_gap_max_seconds integer NOT NULL DEFAULT 180 CHECK (send_gap_max_seconds BETWEEN 0 AND 86400),
  ADD COLUMN next_send_not_before timestamptz,
  ADD CONSTRAINT outreach_mailboxes_send_gap_check CHECK (send_gap_min_seconds <= send_gap_max_seconds);

-- Open and click tracking of a sending domain: its tracking CNAME is required only when on.
ALTER TABLE outreach_domains ADD COLUMN tracking_enabled boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE outreach_domains DROP COLUMN tracking_enabled;
ALTER TABLE outreach_mailboxes DROP CONSTRAINT outreach_mailboxes_send_gap_check,
  DROP COLUMN next_send_not_before, DROP COLUMN send_gap_max_seconds, DROP COLUMN send_gap_min_seconds;
DROP INDEX outreach_messages_enrollment_idx;
ALTER TABLE outreach_messages DROP COLUMN classification;
DROP INDEX outreach_enrollments_unsubscribe_token_idx;
ALTER TABLE outreach_enrollments DROP COLUMN unsubscribed_at, DROP COLUMN unsubscribe_token;
