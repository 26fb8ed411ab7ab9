import type { Db, Sql } from './client';


export interface FileRow {
  id: string;
  org_id: string;
  folder_id: string | null;
  name: string;
  content_type: string;
  /** bigint: postgres.js hands it over as a string. */
  size_bytes: string | null;
  storage_key: string;
  status: 'pending_upload' | 'uploaded' | 'archived';
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  uploaded_at: Date | null;
  archived_at: Date | null;
}

export interface FolderRow {
  id: string;
  org_id: string;
  parent_id: string | null;
  name: string;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Thrown when a sibling folder already has the name. */
export class DuplicateFolderError extends Error {}
/** Thrown when the folder a write names is gone (deleted between the check and the write). */
export class MissingFolderError extends Error {}

function translate(error: unknown): never {
  const code = (error as { code?: string }).code;
  if (code === '23505') throw new DuplicateFolderError('A folder with this name already exists here');
  if (code === '23503') throw new MissingFolderError('Folder not found');
  throw error;
}

/** True when the folder is the organization's; `lock` keeps it from being deleted until commit. */
export async function folderInOrg(sql: Db, orgId: string, folderId: string, lock = false): Promise<boolean> {
  const rows = lock
    ? await sql`SELECT 1 FROM folders WHERE id = ${folderId} AND org_id = ${orgId} FOR KEY SHARE`
    : await sql`SELECT 1 FROM folders WHERE id = ${folderId} AND org_id = ${orgId}`;
  return rows.length > 0;
}

export async function insertFile(
  sql: Db,
  file: Pick<FileRow, 'id' | 'org_id' | 'folder_id' | 'name' | 'content_type' | 'storage_key' | 'created_by'> & { size_bytes: number | null },
): Promise<FileRow> {
  try {
    const [row] = await sql<FileRow[]>`
      INSERT INTO files (id, org_id, folder_id, name, content_type, size_bytes, storage_key, created_by)
      VALUES (${file.id}, ${file.org_id}, ${file.folder_id}, ${file.name}, ${file.content_type}, ${file.size_bytes},
              ${file.storage_key}, ${file.created_by})
      RETURNING *`;
    return row!;
  } catch (error) {
    translate(error);
  }
}

export async function getFile(sql: Db, orgId: string, id: string): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await sql`SELECT * FROM files WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/**
 * Marks a file uploaded with the size object storage reports; undefined when it is gone or archived.
 * A repeat that changes nothing leaves updated_at as it was, so the same row comes back.
 */
export async function markUploaded(sql: Db, orgId: string, id: string, size: number): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await sql`
    UPDATE files SET
      updated_at = CASE WHEN status = 'uploaded' AND size_bytes = ${size} THEN updated_at ELSE now() END,
      status = 'uploaded', size_bytes = ${size}, uploaded_at = coalesce(uploaded_at, now())
    WHERE id = ${id} AND org_id = ${orgId} AND status <> 'archived'
    RETURNING *`;
  return row;
}

/** Archives a file (idempotent); undefined when the organization has no such file. */
export async function archiveFile(sql: Db, orgId: string, id: string): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await sql`
    UPDATE files SET
      updated_at = CASE WHEN status = 'archived' THEN updated_at ELSE now() END,
      archived_at = coalesce(archived_at, now()), status = 'archived'
    WHERE id = ${id} AND org_id = ${orgId}
    RETURNING *`;
  return row;
}

/** A page of files, newest first; archived ones only when `status` asks for them. */
export async function listFiles(
  sql: Db,
  orgId: string,
  filters: { folderId?: string; status?: FileRow['status'] },
  page: { limit: number; offset: number },
): Promise<FileRow[]> {
  const folder = filters.folderId === undefined ? sql`` : sql`AND folder_id = ${filters.folderId}`;
  const status = filters.status === undefined ? sql`AND status <> 'archived'` : sql`AND status = ${filters.status}`;
  return sql<FileRow[]>`
    SELECT * FROM files WHERE org_id = ${orgId} ${folder} ${status}
    ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

export async function insertFolder(sql: Db, folder: Pick<FolderRow, 'id' | 'org_id' | 'parent_id' | 'name' | 'created_by'>): Promise<FolderRow> {
  try {
    const [row] = await sql<FolderRow[]>`
      INSERT INTO folders (id, org_id, parent_id, name, created_by)
      VALUES (${folder.id}, ${folder.org_id}, ${folder.parent_id}, ${folder.name}, ${folder.created_by})
      RETURNING *`;
    return row!;
  } catch (error) {
    translate(error);
  }
}

export async function listFolders(
  sql: Db,
  orgId: string,
  filters: { parentId?: string },
  page: { limit: number; offset: number },
): Promise<FolderRow[]> {
  const parent = filters.parentId === undefined ? sql`` : sql`AND parent_id = ${filters.parentId}`;
  return sql<FolderRow[]>`
    SELECT * FROM folders WHERE org_id = ${orgId} ${parent}
    ORDER BY name, id LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** Folder moves of one organization run one at a time, so two crossing moves cannot make a cycle. */
const lockFolderTree = (tx: Db, orgId: string) => tx`SELECT pg_advisory_xact_lock(hashtextextended(${`folders:${orgId}`}, 0))`;

export type FolderUpdate = FolderRow | 'not_found' | 'parent_not_found' | 'cycle';

/** Renames and/or moves a folder (parent_id null: to the top level), refusing a move into its own subtree. */
export async function updateFolder(
  sql: Sql,
  orgId: string,
  id: string,
  values: { name?: string; parent_id?: string | null },
): Promise<FolderUpdate> {
  try {
    return await sql.begin(async (tx): Promise<FolderUpdate> => {
      if (values.parent_id !== undefined) await lockFolderTree(tx, orgId);
      const [current]: [FolderRow?] = await tx`SELECT * FROM folders WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`;
      if (!current) return 'not_found';
      if (values.parent_id) {
        if (!(await folderInOrg(tx, orgId, values.parent_id, true))) return 'parent_not_found';
        const [inside] = await tx`
          WITH RECURSIVE up AS (
            SELECT id, parent_id FROM folders WHERE id = ${values.parent_id}
            UNION SELECT f.id, f.parent_id FROM folders f JOIN up ON f.id = up.parent_id)
          SELECT 1 FROM up WHERE id = ${id}`;
        if (inside) return 'cycle';
      }
      const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
      const [row] = await tx<FolderRow[]>`UPDATE folders SET ${tx(set)}, updated_at = now() WHERE id = ${id} RETURNING *`;
      return row!;
    });
  } catch (error) {
    translate(error);
  }
}

export type FolderDelete = { deleted: true; storageKeys: string[] } | { deleted: false; reason: 'not_found' | 'not_empty' };

/**
 * Deletes a folder. Without `cascade` only an empty one (no subfolders, no files of any status);
 * with it the whole subtree, whose files' storage keys are returned for the caller to remove.
 */
export async function deleteFolder(sql: Sql, orgId: string, id: string, cascade: boolean): Promise<FolderDelete> {
  return sql.begin(async (tx): Promise<FolderDelete> => {
    const [folder] = await tx`SELECT 1 FROM folders WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`;
    if (!folder) return { deleted: false, reason: 'not_found' };
    if (!cascade) {
      const [content] = await tx`
        SELECT 1 WHERE EXISTS (SELECT 1 FROM folders WHERE parent_id = ${id})
                    OR EXISTS (SELECT 1 FROM files WHERE folder_id = ${id})`;
      if (content) return { deleted: false, reason: 'not_empty' };
      await tx`DELETE FROM folders WHERE id = ${id}`;
      return { deleted: true, storageKeys: [] };
    }
    // Locking the subtree keeps new files and subfolders out of it until the delete commits.
    const subtree = await tx<{ id: string }[]>`
      WITH RECURSIVE down AS (
        SELECT id FROM folders WHERE id = ${id}
        UNION SELECT f.id FROM folders f JOIN down ON f.parent_id = down.id)
      SELECT id FROM folders WHERE id IN (SELECT id FROM down) FOR UPDATE`;
    const files = await tx<{ storage_key: string }[]>`
      SELECT storage_key FROM files WHERE org_id = ${orgId} AND folder_id = ANY(${subtree.map((f) => f.id)}::uuid[])`;
    await tx`DELETE FROM folders WHERE id = ${id}`;
    return { deleted: true, storageKeys: files.map((f) => f.storage_key) };
  });
}
