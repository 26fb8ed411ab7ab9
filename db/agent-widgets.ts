import type postgres from 'postgres';
import { newId } from '../platform/core/ids';
import type { Db } from './client';

type Json = postgres.JSONValue;

export interface WidgetRow {
  id: string;
  agent_id: string;
  name: string;
  config: Record<string, unknown>;
  allowed_origins: string[];
  created_at: Date;
  updated_at: Date;
}

export interface WidgetFields {
  name: string;
  config: Record<string, unknown>;
  allowed_origins: string[];
}

const COLUMNS = ['id', 'agent_id', 'name', 'config', 'allowed_origins', 'created_at', 'updated_at'];

/** Every widget of an agent, oldest first. */
export async function listWidgets(db: Db, orgId: string, agentId: string): Promise<WidgetRow[]> {
  return db<WidgetRow[]>`
    SELECT ${db(COLUMNS)} FROM agent_widgets
    WHERE org_id = ${orgId} AND agent_id = ${agentId} ORDER BY created_at, id`;
}

export async function countWidgets(db: Db, orgId: string, agentId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM agent_widgets WHERE org_id = ${orgId} AND agent_id = ${agentId}`;
  return row!.n;
}

export async function insertWidget(db: Db, orgId: string, agentId: string, fields: WidgetFields): Promise<WidgetRow> {
  const [row] = await db<WidgetRow[]>`
    INSERT INTO agent_widgets (id, org_id, agent_id, name, config, allowed_origins)
    VALUES (${newId()}, ${orgId}, ${agentId}, ${fields.name}, ${db.json(fields.config as Json)}, ${fields.allowed_origins})
    RETURNING ${db(COLUMNS)}`;
  return row!;
}

export async function getWidget(
  db: Db,
  orgId: string,
  agentId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<WidgetRow | undefined> {
  const [row]: [WidgetRow?] = await db`
    SELECT ${db(COLUMNS)} FROM agent_widgets
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND id = ${id} ${opts.forUpdate ? db`FOR UPDATE` : db``}`;
  return row;
}

/** Writes the whole of the given fields (the service merged the patch); undefined when the widget is gone. */
export async function updateWidget(
  db: Db,
  orgId: string,
  agentId: string,
  id: string,
  fields: WidgetFields,
): Promise<WidgetRow | undefined> {
  const [row]: [WidgetRow?] = await db`
    UPDATE agent_widgets SET name = ${fields.name}, config = ${db.json(fields.config as Json)},
      allowed_origins = ${fields.allowed_origins}, updated_at = now()
    WHERE org_id = ${orgId} AND agent_id = ${agentId} AND id = ${id}
    RETURNING ${db(COLUMNS)}`;
  return row;
}

export async function deleteWidget(db: Db, orgId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await db`DELETE FROM agent_widgets WHERE org_id = ${orgId} AND agent_id = ${agentId} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

/** A widget with what its public endpoints need of its agent, found by id alone (no organization is known yet). */
export interface PublicWidgetRow {
  id: string;
  org_id: string;
  agent_id: string;
  config: Record<string, unknown>;
  allowed_origins: string[];
  agent_name: string;
  agent_active: boolean;
  published_version: number | null;
}

export async function findPublicWidget(db: Db, id: string): Promise<PublicWidgetRow | undefined> {
  const [row]: [PublicWidgetRow?] = await db`
    SELECT w.id, w.org_id, w.agent_id, w.config, w.allowed_origins,
           a.name AS agent_name, a.active AS agent_active, a.published_version
    FROM agent_widgets w JOIN agents a ON a.org_id = w.org_id AND a.id = w.agent_id
    WHERE w.id = ${id}`;
  return row;
}
