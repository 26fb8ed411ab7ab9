-- Up Migration
-- PATCH /contacts may clear first_name, last_name and email together (an explicit null clears a field);
-- "needs a name or an email" stays a rule of creation and import only, checked before the insert.
ALTER TABLE contacts DROP CONSTRAINT IF EXISTS contacts_named;

-- Down Migration
ALTER TABLE contacts ADD CONSTRAINT contacts_named CHECK (first_name IS NOT NULL OR last_name IS NOT NULL OR email IS NOT NULL) NOT VALID;
