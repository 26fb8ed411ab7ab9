-- Up Migration
-- Custom data tables: a declaration per table and one row store for every table. Each table also gets a
-- view of its live rows with typed columns (created by the service, under the schema custom_data_<org>),
-- security_invoker so the row-level security of custom_data_rows binds whoever reads it.
CREATE TABLE custom_data_tables (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  description text NOT NULL DEFAULT '',
  key_properties text[] NOT NULL CHECK (cardinality(key_properties) BETWEEN 1 AND 8),
  -- [{name, type, description}] in declaration order; type one of string, number, integer, boolean, timestamp, json.
  properties jsonb NOT NULL CHECK (jsonb_typeof(properties) = 'array'),
  view_schema text NOT NULL,
  view_name text NOT NULL,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);

-- One row per key of a table; `key` is the canonical JSON array of the row's key values. A row absent
-- from a replace is tombstoned (tombstoned_at set), never deleted, and revived when its key comes back.
-- No foreign keys: a 100,000-row write would pay two referential checks per row; rows go with their
-- table through the trigger below (a table goes with its organization by its own foreign key).
CREATE TABLE custom_data_rows (
  table_id uuid NOT NULL,
  key text NOT NULL,
  org_id uuid NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  tombstoned_at timestamptz,
  PRIMARY KEY (table_id, key)
);

CREATE FUNCTION custom_data_rows_follow_table() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  DELETE FROM custom_data_rows r USING gone g WHERE r.table_id = g.id;
  RETURN NULL;
END $f$;
CREATE TRIGGER custom_data_rows_follow_table AFTER DELETE ON custom_data_tables
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION custom_data_rows_follow_table();

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['custom_data_tables', 'custom_data_rows'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE custom_data_rows, custom_data_tables;
DROP FUNCTION custom_data_rows_follow_table();
