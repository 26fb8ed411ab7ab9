-- Up Migration

-- One contact per email in an organization, compared case-insensitively: CSV import upserts by it.
DROP INDEX contacts_org_email_idx;
CREATE UNIQUE INDEX contacts_org_email_key ON contacts (org_id, lower(email)) WHERE email IS NOT NULL;

-- The funnel's stages (see docs/decisions/crm.md, "CRM contacts").
ALTER TABLE contacts ADD CONSTRAINT contacts_stage_check
  CHECK (stage IN ('new', 'contacted', 'responded', 'converted', 'disqualified'));

-- GET /files/list without a folder filter reads the organization's files newest first.
CREATE INDEX files_org_created_idx ON files (org_id, created_at DESC, id);

-- Deleting a contact, account, deal or folder makes Postgres find the referencing rows by the bare column
-- (ON DELETE SET NULL / CASCADE); the (org_id, ...) indexes of 0002 cannot serve that lookup.
CREATE INDEX contacts_account_fk_idx ON contacts (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX deals_contact_fk_idx ON deals (contact_id) WHERE contact_id IS NOT NULL;
CREATE INDEX folders_parent_fk_idx ON folders (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX files_folder_fk_idx ON files (folder_id) WHERE folder_id IS NOT NULL;
CREATE INDEX files_account_fk_idx ON files (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX files_deal_fk_idx ON files (deal_id) WHERE deal_id IS NOT NULL;

-- Down Migration
DROP INDEX files_deal_fk_idx;
DROP INDEX files_account_fk_idx;
DROP INDEX files_folder_fk_idx;
DROP INDEX folders_parent_fk_idx;
DROP INDEX deals_contact_fk_idx;
DROP INDEX contacts_account_fk_idx;
DROP INDEX files_org_created_idx;
ALTER TABLE contacts DROP CONSTRAINT contacts_stage_check;
DROP INDEX contacts_org_email_key;
CREATE INDEX contacts_org_email_idx ON contacts (org_id, lower(email));
