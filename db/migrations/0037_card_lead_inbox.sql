-- Up Migration
-- Leads wait in the card's inbox until a person accepts them into the CRM (or dismisses them): an
-- anonymous form no longer writes contacts. Leads captured before the inbox already made their contacts.
ALTER TABLE card_leads
  ADD COLUMN status text NOT NULL DEFAULT 'accepted' CHECK (status IN ('pending', 'accepted', 'dismissed')),
  ADD COLUMN decided_at timestamptz,
  ADD COLUMN decided_by text;
ALTER TABLE card_leads ALTER COLUMN status SET DEFAULT 'pending';
ALTER TABLE card_leads ALTER COLUMN contact_created SET DEFAULT false;
CREATE INDEX card_leads_inbox_idx ON card_leads (org_id, card_id, status, created_at DESC, id DESC);

-- Down Migration
DROP INDEX card_leads_inbox_idx;
ALTER TABLE card_leads ALTER COLUMN contact_created DROP DEFAULT;
ALTER TABLE card_leads DROP COLUMN status, DROP COLUMN decided_at, DROP COLUMN decided_by;
