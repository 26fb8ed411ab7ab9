-- Up Migration
-- What the user may do in each organization, as its last session there said (null: never seen active
-- there). A pat_ token acting in an organization is limited to these scopes.
ALTER TABLE memberships ADD COLUMN scopes text[];
ALTER TABLE memberships ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- Down Migration
ALTER TABLE memberships DROP COLUMN updated_at;
ALTER TABLE memberships DROP COLUMN scopes;
