import { newId } from '../platform/ids';
import type { Db, Sql } from './client';


export interface TagRow {
  id: string;
  org_id: string;
  name: string;
  color: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Thrown when the organization already has a tag of that name. */
export class DuplicateTagError extends Error {}

// Contacts, deals and accounts keep tags as plain names; these are the tables a rename or delete reaches.
const TAGGED_TABLES = ['contacts', 'deals', 'accounts'] as const;

function translate(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw new DuplicateTagError('A tag with this name already exists');
  throw error;
}

export async function listTags(sql: Db, orgId: string): Promise<TagRow[]> {
  return sql<TagRow[]>`SELECT * FROM tags WHERE org_id = ${orgId} ORDER BY name COLLATE "und-x-icu", id`;
}

export async function insertTag(sql: Db, orgId: string, values: { name: string; color: string | null }): Promise<TagRow> {
  try {
    const [row] = await sql<TagRow[]>`
      INSERT INTO tags (id, org_id, name, color) VALUES (${newId()}, ${orgId}, ${values.name}, ${values.color}) RETURNING *`;
    return row!;
  } catch (error) {
    translate(error);
  }
}

/**
 * Renames and/or recolors a tag; a rename also renames the plain name on every contact, deal and
 * account of the organization (once per record, keeping its position), in the same transaction.
 */
export async function updateTag(
  sql: Sql,
  orgId: string,
  id: string,
  values: { name?: string; color?: string | null },
): Promise<TagRow | undefined> {
  try {
    return await sql.begin(async (tx) => {
      const [before]: [TagRow?] = await tx`SELECT * FROM tags WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`;
      if (!before) return undefined;
      const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
      const [after] = await tx<TagRow[]>`UPDATE tags SET ${tx(set)}, updated_at = now() WHERE id = ${id} RETURNING *`;
      if (after!.name !== before.name) {
        for (const table of TAGGED_TABLES) await renameIn(tx, table, orgId, before.name, after!.name);
      }
      return after;
    });
  } catch (error) {
    translate(error);
  }
}

async function renameIn(tx: Db, table: (typeof TAGGED_TABLES)[number], orgId: string, from: string, to: string): Promise<void> {
  await tx`
    UPDATE ${tx(table)} SET updated_at = now(), tags = ARRAY(
      SELECT t FROM unnest(array_replace(tags, ${from}::text, ${to}::text)) WITH ORDINALITY AS u(t, i)
      GROUP BY t ORDER BY min(i))
    WHERE org_id = ${orgId} AND tags @> ARRAY[${from}]::text[]`;
}

/** Deletes a tag and removes its name from every contact, deal and account of the organization. */
export async function deleteTag(sql: Sql, orgId: string, id: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [row]: [{ name: string }?] = await tx`DELETE FROM tags WHERE id = ${id} AND org_id = ${orgId} RETURNING name`;
    if (!row) return false;
    for (const table of TAGGED_TABLES) {
      await tx`
        UPDATE ${tx(table)} SET updated_at = now(), tags = array_remove(tags, ${row.name}::text)
        WHERE org_id = ${orgId} AND tags @> ARRAY[${row.name}]::text[]`;
    }
    return true;
  });
}
