import { notFound } from '../domain/errors';
import type { FileStatus } from '../domain/files';
import type { Db } from './client';
import { PG, isPgError } from './pg-errors';
import { conflictOnUnique } from './kit/unique';
import { setColumns } from './kit/partial-update';

export interface FileRow {
  id: string;
  org_id: string;
  folder_id: string | null;
  name: string;
  content_type: string;
  /** bigint: postgres.js hands it over as a string. */
  size_bytes: string | null;
  storage_key: string;
  status: FileStatus;
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

/** A sibling with the name is a conflict; a folder deleted between the check and the write is gone. */
function translate(error: unknown): never {
  conflictOnUnique(error, 'A folder with this name already exists here');
  if (isPgError(error, PG.FOREIGN_KEY_VIOLATION)) throw notFound('Folder not found');
  throw error;
}

/** True when the folder is the organization's; `lock` keeps it from being deleted until commit. */
export async function folderInOrg(db: Db, orgId: string, folderId: string, lock = false): Promise<boolean> {
  const rows = lock
    ? await db`SELECT 1 FROM folders WHERE id = ${folderId} AND org_id = ${orgId} FOR KEY SHARE`
    : await db`SELECT 1 FROM folders WHERE id = ${folderId} AND org_id = ${orgId}`;
  return rows.length > 0;
}

export async function insertFile(
  db: Db,
  orgId: string,
  file: Pick<FileRow, 'id' | 'folder_id' | 'name' | 'content_type' | 'storage_key' | 'created_by'> & { size_bytes: number | null },
): Promise<FileRow> {
  try {
    const [row] = await db<FileRow[]>`
      INSERT INTO files (id, org_id, folder_id, name, content_type, size_bytes, storage_key, created_by)
      VALUES (${file.id}, ${orgId}, ${file.folder_id}, ${file.name}, ${file.content_type}, ${file.size_bytes},
              ${file.storage_key}, ${file.created_by})
      RETURNING *`;
    return row!;
  } catch (error) {
    translate(error);
  }
}

export async function getFile(db: Db, orgId: string, id: string): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await db`SELECT * FROM files WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/**
 * Marks a file uploaded with the size object storage reports; undefined when it is gone or archived.
 * A repeat that changes nothing leaves updated_at as it was, so the same row comes back.
 */
export async function markUploaded(db: Db, orgId: string, id: string, size: number): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await db`
    UPDATE files SET
      updated_at = CASE WHEN status = 'uploaded' AND size_bytes = ${size} THEN updated_at ELSE now() END,
      status = 'uploaded', size_bytes = ${size}, uploaded_at = coalesce(uploaded_at, now())
    WHERE id = ${id} AND org_id = ${orgId} AND status <> 'archived'
    RETURNING *`;
  return row;
}

/** Archives a file (idempotent); undefined when the organization has no such file. */
export async function archiveFile(db: Db, orgId: string, id: string): Promise<FileRow | undefined> {
  const [row]: [FileRow?] = await db`
    UPDATE files SET
      updated_at = CASE WHEN status = 'archived' THEN updated_at ELSE now() END,
      archived_at = coalesce(archived_at, now()), status = 'archived'
    WHERE id = ${id} AND org_id = ${orgId}
    RETURNING *`;
  return row;
}

/** A page of files, newest first; archived ones only when `status` asks for them. */
export async function listFiles(
  db: Db,
  orgId: string,
  filters: { folderId?: string; status?: FileStatus },
  page: { limit: number; offset: number },
): Promise<FileRow[]> {
  const folder = filters.folderId === undefined ? db`` : db`AND folder_id = ${filters.folderId}`;
  const status = filters.status === undefined ? db`AND status <> 'archived'` : db`AND status = ${filters.status}`;
  return db<FileRow[]>`
    SELECT * FROM files WHERE org_id = ${orgId} ${folder} ${status}
    ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

export async function insertFolder(
  db: Db,
  orgId: string,
  folder: Pick<FolderRow, 'id' | 'parent_id' | 'name' | 'created_by'>,
): Promise<FolderRow> {
  try {
    const [row] = await db<FolderRow[]>`
      INSERT INTO folders (id, org_id, parent_id, name, created_by)
      VALUES (${folder.id}, ${orgId}, ${folder.parent_id}, ${folder.name}, ${folder.created_by})
      RETURNING *`;
    return row!;
  } catch (error) {
    translate(error);
  }
}

export async function listFolders(
  db: Db,
  orgId: string,
  filters: { parentId?: string },
  page: { limit: number; offset: number },
): Promise<FolderRow[]> {
  const parent = filters.parentId === undefined ? db`` : db`AND parent_id = ${filters.parentId}`;
  return db<FolderRow[]>`
    SELECT * FROM folders WHERE org_id = ${orgId} ${parent}
    ORDER BY name, id LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** Folder moves of one organization run one at a time, so two crossing moves cannot make a cycle. */
export const lockFolderTree = async (db: Db, orgId: string): Promise<void> => {
  await db`SELECT pg_advisory_xact_lock(hashtextextended(${`folders:${orgId}`}, 0))`;
};

/** The folder, locked for update until commit. */
export async function lockFolder(db: Db, orgId: string, id: string): Promise<FolderRow | undefined> {
  const [row]: [FolderRow?] = await db`SELECT * FROM folders WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`;
  return row;
}

/** True when `folderId` is `candidateParentId` or one of its ancestors (a move there would make a cycle). */
export async function isAncestorOrSelf(db: Db, orgId: string, folderId: string, candidateParentId: string): Promise<boolean> {
  const [inside] = await db`
    WITH RECURSIVE up AS (
      SELECT id, parent_id FROM folders WHERE id = ${candidateParentId} AND org_id = ${orgId}
      UNION SELECT f.id, f.parent_id FROM folders f JOIN up ON f.id = up.parent_id WHERE f.org_id = ${orgId})
    SELECT 1 FROM up WHERE id = ${folderId}`;
  return inside !== undefined;
}

/** Sets the given columns of a folder. */
export async function updateFolder(
  db: Db,
  orgId: string,
  id: string,
  values: { name?: string; parent_id?: string | null },
): Promise<FolderRow | undefined> {
  try {
    const [row]: [FolderRow?] = await db`
      UPDATE folders SET ${setColumns(db, values, ['name', 'parent_id'])}, updated_at = now() WHERE id = ${id} AND org_id = ${orgId} RETURNING *`;
    return row;
  } catch (error) {
    translate(error);
  }
}

/** True when the folder holds a subfolder or a file of any status. */
export async function folderHasContent(db: Db, orgId: string, id: string): Promise<boolean> {
  const [content] = await db`
    SELECT 1 WHERE EXISTS (SELECT 1 FROM folders WHERE org_id = ${orgId} AND parent_id = ${id})
                OR EXISTS (SELECT 1 FROM files WHERE org_id = ${orgId} AND folder_id = ${id})`;
  return content !== undefined;
}

/**
 * Locks the folder's whole subtree (keeping new files and subfolders out of it until commit) and
 * returns the storage keys of the files in it.
 */
export async function lockSubtreeStorageKeys(db: Db, orgId: string, id: string): Promise<string[]> {
  const subtree = await db<{ id: string }[]>`
    WITH RECURSIVE down AS (
      SELECT id FROM folders WHERE id = ${id} AND org_id = ${orgId}
      UNION SELECT f.id FROM folders f JOIN down ON f.parent_id = down.id WHERE f.org_id = ${orgId})
    SELECT id FROM folders WHERE org_id = ${orgId} AND id IN (SELECT id FROM down) FOR UPDATE`;
  const files = await db<{ storage_key: string }[]>`
    SELECT storage_key FROM files WHERE org_id = ${orgId} AND folder_id = ANY(${subtree.map((f) => f.id)}::uuid[])`;
  return files.map((f) => f.storage_key);
}

/** Deletes a folder (subfolders and files go with it by cascade). */
export async function deleteFolder(db: Db, orgId: string, id: string): Promise<void> {
  await db`DELETE FROM folders WHERE id = ${id} AND org_id = ${orgId}`;
}
