/**
 * Hostile statements for the Analytics Assistant, each with the guard rule that must refuse it. The same
 * list goes through POST /analytics-assistant/query and through a scripted model's run_sql calls.
 * `OTHER_ORG` is replaced by another organization's id before use.
 */
export interface Attack {
  name: string;
  sql: string;
  rule: string;
}

export const OTHER_ORG = '__OTHER_ORG__';
export const OTHER_CUSTOM_VIEW = '__OTHER_CUSTOM_VIEW__';

export const ATTACKS: Attack[] = [
  { name: 'insert into a view', sql: "INSERT INTO analytics.accounts (id, name) VALUES (gen_random_uuid(), 'x')", rule: 'select_only' },
  { name: 'update', sql: 'UPDATE deals SET value = 0', rule: 'select_only' },
  { name: 'delete', sql: 'DELETE FROM contacts', rule: 'select_only' },
  { name: 'merge', sql: 'MERGE INTO deals d USING deals s ON d.id = s.id WHEN MATCHED THEN DELETE', rule: 'select_only' },
  { name: 'truncate', sql: 'TRUNCATE accounts', rule: 'select_only' },
  { name: 'drop table', sql: 'DROP TABLE public.accounts', rule: 'select_only' },
  { name: 'create table', sql: 'CREATE TABLE stolen AS SELECT * FROM accounts', rule: 'select_only' },
  { name: 'alter role', sql: 'ALTER ROLE analytics_reader BYPASSRLS', rule: 'select_only' },
  { name: 'grant', sql: 'GRANT SELECT ON public.accounts TO analytics_reader', rule: 'select_only' },
  { name: 'two statements', sql: 'SELECT 1; DELETE FROM accounts', rule: 'single_statement' },
  { name: 'second statement behind a comment', sql: 'SELECT 1 /* ; */; DROP TABLE deals -- trailing', rule: 'single_statement' },
  { name: 'second statement after a line comment', sql: 'SELECT 1 -- harmless\n; DELETE FROM deals', rule: 'single_statement' },
  { name: 'set role', sql: 'SET ROLE postgres', rule: 'select_only' },
  { name: 'reset role', sql: 'RESET ROLE', rule: 'select_only' },
  { name: 'session authorization', sql: 'SET SESSION AUTHORIZATION postgres', rule: 'select_only' },
  { name: 'organization spoofing with SET LOCAL', sql: `SET LOCAL app.org_id = '${OTHER_ORG}'`, rule: 'select_only' },
  {
    name: 'organization spoofing with set_config',
    sql: `SELECT set_config('app.org_id', '${OTHER_ORG}', true), name FROM accounts`,
    rule: 'allowlisted_functions',
  },
  {
    name: 'token spoofing with set_config',
    sql: "SELECT set_config('analytics.org_token', 'forged', false)",
    rule: 'allowlisted_functions',
  },
  { name: 'reading the token', sql: "SELECT current_setting('analytics.org_token')", rule: 'allowlisted_functions' },
  { name: 'signing another organization', sql: `SELECT analytics_private.org_token('${OTHER_ORG}')`, rule: 'allowlisted_functions' },
  { name: 'the signing key', sql: 'SELECT * FROM analytics_private.signing_key', rule: 'allowlisted_relations' },
  { name: 'pg_authid', sql: 'SELECT rolname, rolpassword FROM pg_catalog.pg_authid', rule: 'allowlisted_relations' },
  { name: 'pg_class unqualified', sql: 'SELECT relname FROM pg_class', rule: 'allowlisted_relations' },
  { name: 'TABLE pg_roles', sql: 'TABLE pg_roles', rule: 'allowlisted_relations' },
  { name: 'information_schema', sql: 'SELECT * FROM information_schema.tables', rule: 'allowlisted_relations' },
  { name: 'other sessions’ queries', sql: 'SELECT query FROM pg_stat_activity', rule: 'allowlisted_relations' },
  { name: 'the base table', sql: 'SELECT * FROM public.accounts', rule: 'allowlisted_relations' },
  { name: 'the custom-data row store', sql: 'SELECT * FROM custom_data_rows', rule: 'allowlisted_relations' },
  { name: 'another organization’s custom-data view', sql: `SELECT * FROM ${OTHER_CUSTOM_VIEW}`, rule: 'allowlisted_relations' },
  { name: 'another database', sql: 'SELECT * FROM postgres.analytics.accounts', rule: 'allowlisted_relations' },
  {
    name: 'a CTE named like a catalog, used before it exists',
    sql: 'WITH a AS (SELECT * FROM pg_roles), pg_roles AS (SELECT 1 AS x) SELECT * FROM a',
    rule: 'allowlisted_relations',
  },
  { name: 'unicode-escaped catalog name', sql: 'SELECT * FROM U&"pg\\0061uthid"', rule: 'allowlisted_relations' },
  { name: 'pg_sleep', sql: 'SELECT pg_sleep(60)', rule: 'allowlisted_functions' },
  { name: 'qualified pg_sleep_for', sql: "SELECT pg_catalog.pg_sleep_for('1 minute')", rule: 'allowlisted_functions' },
  { name: 'unicode-escaped pg_sleep', sql: 'SELECT U&"pg\\005fsleep"(5)', rule: 'allowlisted_functions' },
  {
    name: 'pg_sleep hidden in a subquery filter',
    sql: 'SELECT name FROM accounts WHERE id IN (SELECT id FROM accounts WHERE pg_sleep(1) IS NOT NULL)',
    rule: 'allowlisted_functions',
  },
  { name: 'pg_read_file', sql: "SELECT pg_read_file('/etc/passwd')", rule: 'allowlisted_functions' },
  { name: 'pg_read_binary_file', sql: "SELECT pg_read_binary_file('postgresql.conf')", rule: 'allowlisted_functions' },
  { name: 'pg_ls_dir', sql: "SELECT * FROM pg_ls_dir('.')", rule: 'allowlisted_functions' },
  { name: 'lo_import', sql: "SELECT lo_import('/etc/passwd')", rule: 'allowlisted_functions' },
  { name: 'lo_get', sql: 'SELECT lo_get(16384)', rule: 'allowlisted_functions' },
  {
    name: 'dblink',
    sql: "SELECT * FROM dblink('host=127.0.0.1 user=postgres', 'DELETE FROM accounts') AS t(x int)",
    rule: 'allowlisted_functions',
  },
  { name: 'COPY … TO PROGRAM', sql: "COPY (SELECT 1) TO PROGRAM 'touch /tmp/analytics-pwned'", rule: 'select_only' },
  { name: 'COPY to a file', sql: "COPY accounts TO '/tmp/analytics-accounts'", rule: 'select_only' },
  { name: 'EXPLAIN ANALYZE of a delete', sql: 'EXPLAIN ANALYZE DELETE FROM accounts', rule: 'select_only' },
  {
    name: 'data-modifying WITH',
    sql: 'WITH d AS (DELETE FROM accounts RETURNING *) SELECT count(*) FROM d',
    rule: 'no_data_modifying_with',
  },
  {
    name: 'data-modifying WITH in a subquery',
    sql: 'SELECT * FROM (WITH u AS (UPDATE deals SET value = 0 RETURNING id) SELECT id FROM u) s',
    rule: 'no_data_modifying_with',
  },
  { name: 'FOR UPDATE', sql: 'SELECT * FROM accounts FOR UPDATE', rule: 'no_locking' },
  { name: 'FOR SHARE in a subquery', sql: 'SELECT * FROM (SELECT id FROM deals FOR SHARE) s', rule: 'no_locking' },
  { name: 'SELECT INTO', sql: 'SELECT * INTO stolen FROM accounts', rule: 'no_into' },
  { name: 'nextval', sql: "SELECT nextval('pgmigrations_id_seq')", rule: 'allowlisted_functions' },
  { name: 'advisory lock', sql: 'SELECT pg_advisory_lock(42)', rule: 'allowlisted_functions' },
  { name: 'terminate a backend', sql: 'SELECT pg_terminate_backend(pg_backend_pid())', rule: 'allowlisted_functions' },
  { name: 'regclass cast', sql: "SELECT 'pg_authid'::regclass", rule: 'allowlisted_types' },
  { name: 'query_to_xml', sql: "SELECT query_to_xml('SELECT * FROM pg_authid', true, true, '')", rule: 'allowlisted_functions' },
  {
    name: 'XML external entity',
    sql: 'SELECT xmlparse(document \'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>\')',
    rule: 'no_xml',
  },
  { name: 'a parameter', sql: 'SELECT * FROM accounts WHERE id = $1', rule: 'no_parameters' },
  { name: 'DO block', sql: 'DO $$ BEGIN DELETE FROM accounts; END $$', rule: 'select_only' },
  { name: 'PREPARE a delete', sql: 'PREPARE p AS DELETE FROM accounts', rule: 'select_only' },
  { name: 'LOCK TABLE', sql: 'LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE', rule: 'select_only' },
  { name: 'VACUUM', sql: 'VACUUM accounts', rule: 'select_only' },
  { name: 'empty statement', sql: ' ; -- nothing', rule: 'empty_statement' },
  { name: 'not SQL', sql: 'DROP EVERYTHING NOW PLEASE', rule: 'syntax' },
];

/** Statements the guard lets through that must still show only the caller's own rows. */
export const HARMLESS = [
  'SELECT name FROM accounts WHERE true OR 1 = 1',
  'SELECT name FROM accounts -- ; DELETE FROM accounts',
  'SELECT name FROM accounts /* UNION SELECT rolname FROM pg_authid */ UNION ALL SELECT name FROM analytics.accounts',
  'WITH pg_roles AS (SELECT name FROM accounts) SELECT * FROM pg_roles',
  'SELECT a.name FROM accounts a JOIN deals d ON d.account_id = a.id',
];

export const withOther = (sql: string, orgId: string, customView: string) =>
  sql.replaceAll(OTHER_ORG, orgId).replaceAll(OTHER_CUSTOM_VIEW, customView);
