import type { TaggedTable } from '../domain/tags';
import { newId } from '../platform/core/ids';
import type { Db } from './client';
import { onUnique } from './kit/unique';
import { setColumns } from './kit/partial-update';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id; the service decides the
// transaction. A unique violation is the one domain outcome translated here, since only SQL sees it.

export interface TagRow {
  id: string;
  org_id: string;
  name: string;
  color: string | null;
  created_at: Date;
  updated_at: Date;
}

const DUPLICATE_NAME = 'A tag with this name already exists';

export async function listTags(db: Db, orgId: string): Promise<TagRow[]> {
  return db<TagRow[]>`SELECT * FROM tags WHERE org_id = ${orgId} ORDER BY name COLLATE "und-x-icu", id`;
}

export async function insertTag(db: Db, orgId: string, values: { name: string; color: string | null }): Promise<TagRow> {
  const [row] = await onUnique(
    db<TagRow[]>`
      INSERT INTO tags (id, org_id, name, color) VALUES (${newId()}, ${orgId}, ${values.name}, ${values.color}) RETURNING *`,
    DUPLICATE_NAME,
  );
  return row!;
}

/** The tag, locked for update until the transaction ends. */
export async function lockTag(db: Db, orgId: string, tagId: string): Promise<TagRow | undefined> {
  const [row]: [TagRow?] = await db`SELECT * FROM tags WHERE id = ${tagId} AND org_id = ${orgId} FOR UPDATE`;
  return row;
}

export async function updateTag(
  db: Db,
  orgId: string,
  tagId: string,
  values: { name?: string; color?: string | null },
): Promise<TagRow | undefined> {
  const [row]: [TagRow?] = await onUnique(
    db`UPDATE tags SET ${setColumns(db, values, ['name', 'color'])}, updated_at = now() WHERE id = ${tagId} AND org_id = ${orgId} RETURNING *`,
    DUPLICATE_NAME,
  );
  return row;
}

/** Deletes the tag; its name, or undefined when the organization has no such tag. */
export async function deleteTag(db: Db, orgId: string, tagId: string): Promise<string | undefined> {
  const [row]: [{ name: string }?] = await db`DELETE FROM tags WHERE id = ${tagId} AND org_id = ${orgId} RETURNING name`;
  return row?.name;
}

/** Renames a plain tag name on the organization's records of one table (once per record, keeping its position). */
export async function renameTagIn(db: Db, orgId: string, table: TaggedTable, from: string, to: string): Promise<void> {
  await db`
    UPDATE ${db(table)} SET updated_at = now(), tags = ARRAY(
      SELECT t FROM unnest(array_replace(tags, ${from}::text, ${to}::text)) WITH ORDINALITY AS u(t, i)
      GROUP BY t ORDER BY min(i))
    WHERE org_id = ${orgId} AND tags @> ARRAY[${from}]::text[]`;
}

/** Removes a plain tag name from the organization's records of one table. */
export async function removeTagFrom(db: Db, orgId: string, table: TaggedTable, name: string): Promise<void> {
  await db`
    UPDATE ${db(table)} SET updated_at = now(), tags = array_remove(tags, ${name}::text)
    WHERE org_id = ${orgId} AND tags @> ARRAY[${name}]::text[]`;
}
