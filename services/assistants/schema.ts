import * as db from '../../db/analytics-assistant';
import { CRM_VIEWS, DEFAULT_SCHEMA } from '../../domain/analytics-assistant';
import type { ServiceDeps } from '../deps';

export interface SchemaColumn {
  name: string;
  type: string;
  description: string | null;
}

export interface SchemaRelation {
  /** What to write in FROM: `analytics.deals`, or a custom-data view `custom_data_<org>.<table>`. */
  name: string;
  kind: 'crm' | 'custom_data';
  description: string | null;
  columns: SchemaColumn[];
}

/** The relations and columns an organization's queries may read: the CRM views and its own custom-data views. */
export async function readableSchema(deps: Pick<ServiceDeps, 'sql'>, orgId: string): Promise<SchemaRelation[]> {
  const [crm, custom] = await Promise.all([db.analyticsColumns(deps.sql), db.customViews(deps.sql, orgId)]);
  const relations = new Map<string, SchemaRelation>();
  for (const row of crm) {
    if (!(CRM_VIEWS as readonly string[]).includes(row.relation)) continue;
    const name = `${row.schema}.${row.relation}`;
    const relation = relations.get(name) ?? { name, kind: 'crm' as const, description: row.relation_description, columns: [] };
    relation.columns.push({ name: row.column, type: row.type, description: row.description });
    relations.set(name, relation);
  }
  for (const table of custom) {
    if (!table.columns) continue; // its view is being re-created
    const described = new Map(table.properties.map((p) => [p.name, p.description ?? null]));
    relations.set(`${table.view_schema}.${table.view_name}`, {
      name: `${table.view_schema}.${table.view_name}`,
      kind: 'custom_data',
      description: table.description || `Custom data table ${table.name}`,
      columns: table.columns.map((c) => ({
        name: c.name,
        type: c.type,
        description:
          described.get(c.name) ??
          (c.name === '_created_at' ? 'When the row was first written' : c.name === '_updated_at' ? 'When the row last changed' : null),
      })),
    });
  }
  return [...relations.values()];
}

/** `schema.name` of every relation the organization may read, for the guard. */
export const allowlistOf = (relations: SchemaRelation[]): Set<string> => new Set(relations.map((r) => r.name));

export const isCustomView = (qualified: string): boolean => !qualified.startsWith(`${DEFAULT_SCHEMA}.`);
