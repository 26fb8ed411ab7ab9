-- Up Migration
-- A call turning final is written as an activity of the organization's oldest contact with the called
-- number (db/crm-call-activities.ts): this index finds it without reading the organization's contacts.
CREATE INDEX contacts_org_phone_idx ON contacts (org_id, phone, created_at, id) WHERE phone IS NOT NULL;

-- Down Migration
DROP INDEX contacts_org_phone_idx;
