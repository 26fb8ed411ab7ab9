-- Up Migration
-- Lists "ordered by name" sort names as people read them (ICU root collation: "acme" < "Beta" <
-- "zeta"), the same whatever collation the database was created with; the index follows the order.
CREATE INDEX accounts_org_name_icu_idx ON accounts (org_id, (name COLLATE "und-x-icu"), id);
DROP INDEX accounts_org_name_idx;

-- Down Migration
CREATE INDEX accounts_org_name_idx ON accounts (org_id, name, id);
DROP INDEX accounts_org_name_icu_idx;
