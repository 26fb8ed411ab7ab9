-- Up Migration
-- A contact keeps at least one of its names or its email: create and import require it, and a PATCH
-- clearing all three is refused rather than leaving a row nobody can find.
ALTER TABLE contacts ADD CONSTRAINT contacts_named CHECK (first_name IS NOT NULL OR last_name IS NOT NULL OR email IS NOT NULL);

-- Down Migration
ALTER TABLE contacts DROP CONSTRAINT contacts_named;
