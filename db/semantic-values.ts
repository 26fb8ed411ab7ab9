import type { Db } from './client';

export interface ValueRow {
  entity: string;
  field: string;
  value: string;
}

/** Values of one kind read at most: a question names records a person would recall, the index stays small. */
const PER_FIELD = 5000;

/**
 * The organization's values the question parser matches words against: names, stages, industries,
 * tags, titles, domains, sources, owners, types and statuses, each distinct, as the service's role
 * reads them (tenant filter in every branch).
 */
export async function crmValues(db: Db, orgId: string): Promise<ValueRow[]> {
  return db<ValueRow[]>`
    WITH
      a AS (SELECT name, industry, domain, owner_id FROM accounts WHERE org_id = ${orgId} ORDER BY updated_at DESC LIMIT ${PER_FIELD}),
      c AS (SELECT first_name, last_name, title, source, stage, owner_id, department, email FROM contacts WHERE org_id = ${orgId} ORDER BY updated_at DESC LIMIT ${PER_FIELD}),
      d AS (SELECT name, stage, currency, owner_id FROM deals WHERE org_id = ${orgId} ORDER BY updated_at DESC LIMIT ${PER_FIELD})
    SELECT DISTINCT entity, field, value FROM (
      SELECT 'accounts' AS entity, 'name' AS field, name AS value FROM a
      UNION ALL SELECT 'accounts', 'industry', industry FROM a
      UNION ALL SELECT 'accounts', 'domain', domain FROM a
      UNION ALL SELECT 'accounts', 'owner_id', owner_id FROM a
      UNION ALL SELECT 'contacts', 'name', nullif(concat_ws(' ', first_name, last_name), '') FROM c
      UNION ALL SELECT 'contacts', 'title', title FROM c
      UNION ALL SELECT 'contacts', 'source', source FROM c
      UNION ALL SELECT 'contacts', 'stage', stage FROM c
      UNION ALL SELECT 'contacts', 'owner_id', owner_id FROM c
      UNION ALL SELECT 'contacts', 'department', department FROM c
      UNION ALL SELECT 'contacts', 'email_domain', nullif(split_part(email, '@', 2), '') FROM c
      UNION ALL SELECT 'deals', 'name', name FROM d
      UNION ALL SELECT 'deals', 'stage', stage FROM d
      UNION ALL SELECT 'deals', 'currency', currency FROM d
      UNION ALL SELECT 'deals', 'owner_id', owner_id FROM d
      UNION ALL (SELECT DISTINCT 'activities', 'type', type FROM activities WHERE org_id = ${orgId} LIMIT 100)
      UNION ALL (SELECT 'tags', 'name', name FROM tags WHERE org_id = ${orgId} LIMIT ${PER_FIELD})
      UNION ALL (SELECT 'campaigns', 'name', name FROM campaigns WHERE org_id = ${orgId} LIMIT ${PER_FIELD})
      UNION ALL (SELECT DISTINCT 'campaigns', 'status', status FROM campaigns WHERE org_id = ${orgId})
    ) v WHERE value IS NOT NULL AND value <> ''`;
}

/** Distinct text values of a custom table's columns (live rows only). */
export async function customTextValues(db: Db, orgId: string, table: string, columns: string[]): Promise<ValueRow[]> {
  if (columns.length === 0) return [];
  return db<ValueRow[]>`
    SELECT DISTINCT ${table} AS entity, col AS field, r.data->>col AS value
    FROM custom_data_rows r
    JOIN custom_data_tables t ON t.id = r.table_id AND t.org_id = ${orgId} AND t.name = ${table}
    CROSS JOIN unnest(${columns}::text[]) AS col
    WHERE r.org_id = ${orgId} AND r.tombstoned_at IS NULL AND jsonb_typeof(r.data->col) = 'string'
    LIMIT ${PER_FIELD}`;
}
