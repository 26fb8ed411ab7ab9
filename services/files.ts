import * as files from '../db/files';
import type { FileRow, FolderRow } from '../db/files';
import { conflict, invalid, notFound, unprocessable } from '../domain/errors';
import { URL_TTL_SECONDS, downloadRefusal, storageKey, type FileStatus } from '../domain/files';
import { newId } from '../platform/core/ids';
import type { ServiceDeps } from './deps';
import { iso } from './views';

/** Object deletions after a cascading folder delete run this many at a time. */
const DELETE_CONCURRENCY = 8;

export const fileView = (row: FileRow) => ({
  id: row.id,
  folder_id: row.folder_id,
  name: row.name,
  content_type: row.content_type,
  size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
  status: row.status,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  uploaded_at: iso(row.uploaded_at),
  archived_at: iso(row.archived_at),
});

const folderView = (row: FolderRow) => ({
  id: row.id,
  parent_id: row.parent_id,
  name: row.name,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const expiresAt = () => new Date(Date.now() + URL_TTL_SECONDS * 1000).toISOString();
const fileNotFound = () => notFound('File not found');
const folderNotFound = () => notFound('Folder not found');

type Page = { limit: number; offset: number };

/**
 * Where upload URLs issued before uploads became create-only wrote (beside the file's object), still
 * confirmed and cleaned up. Today's URL writes the file's own key, once: it is signed for
 * `If-None-Match: *`, so it can never replace an object, and after confirm-upload it is refused.
 */
export const uploadKey = (storageKey: string) => `${storageKey}.upload`;

/** Media types compared as HTTP does: case and spaces around parameters aside. */
const sameMediaType = (a: string, b: string) => a.toLowerCase().replace(/\s+/g, '') === b.toLowerCase().replace(/\s+/g, '');

/** A file row pending upload and a presigned URL for its bytes, together: if signing fails the row is rolled back. */
export async function initiateUpload(
  deps: Pick<ServiceDeps, 'sql' | 'storage' | 'config'>,
  orgId: string,
  actor: string,
  input: { name: string; content_type: string; size_bytes?: number | null; folder_id?: string | null },
) {
  const maxBytes = deps.config.UPLOAD_MAX_BYTES;
  if (input.size_bytes != null && input.size_bytes > maxBytes)
    throw unprocessable([{ loc: ['body', 'size_bytes'], msg: `size_bytes is above the maximum file size (${maxBytes} bytes)` }]);
  const id = newId();
  const key = storageKey(orgId, id);
  const folderId = input.folder_id ?? null;
  const { row, url } = await deps.sql.begin(async (tx) => {
    if (folderId && !(await files.folderInOrg(tx, orgId, folderId, true))) throw folderNotFound();
    const row = await files.insertFile(tx, orgId, {
      id,
      folder_id: folderId,
      name: input.name,
      content_type: input.content_type,
      size_bytes: input.size_bytes ?? null,
      storage_key: key,
      created_by: actor,
    });
    // The declared size binds the upload exactly; without one, the maximum bounds it where the driver can.
    // Create-only: the URL is single-use, nothing it sends can replace the object once written.
    const url = await deps.storage.presignPut(key, {
      contentType: input.content_type,
      contentLength: input.size_bytes ?? undefined,
      maxBytes,
      expiresInSeconds: URL_TTL_SECONDS,
      createOnly: true,
    });
    return { row, url };
  });
  return {
    ...fileView(row),
    upload_url: url,
    upload_method: 'PUT' as const,
    upload_headers: { 'Content-Type': input.content_type, 'If-None-Match': '*' },
    upload_expires_at: expiresAt(),
  };
}

export async function listFiles(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  filters: { folder_id?: string; status?: FileStatus },
  page: Page,
) {
  const rows = await files.listFiles(deps.sql, orgId, { folderId: filters.folder_id, status: filters.status }, page);
  return { files: rows.map(fileView), limit: page.limit, offset: page.offset };
}

export async function getFile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, fileId: string) {
  const row = await files.getFile(deps.sql, orgId, fileId);
  if (!row) throw fileNotFound();
  return fileView(row);
}

/**
 * Marks a file uploaded once its object is in storage and matches what initiate-upload declared (size,
 * content type, the maximum file size). A mismatching object is removed and refused (409), the file
 * stays pending, and the same URL may upload again (it only creates, and the key is free again). Every
 * call re-checks the store, so a repeat is an idempotent re-verification; a StorageError reaches the
 * API as 502.
 */
export async function confirmUpload(deps: Pick<ServiceDeps, 'sql' | 'storage' | 'config'>, orgId: string, fileId: string) {
  const file = await files.getFile(deps.sql, orgId, fileId);
  if (!file || file.status === 'archived') throw fileNotFound();
  const notYet = () => conflict('The uploaded object is not in object storage yet; retry shortly');
  const pending = file.status === 'pending_upload';
  let head = await deps.storage.head(file.storage_key);
  if (!head && pending) {
    // An upload through a URL of the earlier staging scheme.
    const staged = uploadKey(file.storage_key);
    const stagedHead = await deps.storage.head(staged);
    if (stagedHead) {
      await rejectMismatch(deps, staged, stagedHead, file);
      await deps.storage.move(staged, file.storage_key, stagedHead.etag ? { ifEtag: stagedHead.etag } : {});
      head = await deps.storage.head(file.storage_key);
    }
  } else if (head && pending) await rejectMismatch(deps, file.storage_key, head, file);
  if (!head) throw notYet();
  const row = await files.markUploaded(deps.sql, orgId, file.id, head.size);
  if (!row) throw fileNotFound(); // archived meanwhile
  return fileView(row);
}

/** Removes an uploaded object that does not match its file's declaration, and refuses it (409). */
async function rejectMismatch(
  deps: Pick<ServiceDeps, 'storage' | 'config'>,
  key: string,
  head: { size: number; contentType: string | null },
  file: FileRow,
) {
  const problem = uploadMismatch(head, file, deps.config.UPLOAD_MAX_BYTES);
  if (!problem) return;
  await deps.storage.delete(key);
  throw conflict(`The uploaded object does not match the upload: ${problem}. It was removed; upload the file again`);
}

/** Why an uploaded object does not match its file's declaration, or null when it does. */
function uploadMismatch(head: { size: number; contentType: string | null }, file: FileRow, maxBytes: number): string | null {
  const declared = file.size_bytes === null ? null : Number(file.size_bytes);
  if (declared !== null && head.size !== declared) return `${head.size} bytes were uploaded, ${declared} were declared`;
  if (head.size > maxBytes) return `${head.size} bytes were uploaded, the maximum file size is ${maxBytes} bytes`;
  if (head.contentType && !sameMediaType(head.contentType, file.content_type))
    return `it was uploaded as ${head.contentType}, ${file.content_type} was declared`;
  return null;
}

export async function downloadUrl(deps: Pick<ServiceDeps, 'sql' | 'storage'>, orgId: string, fileId: string) {
  const file = await files.getFile(deps.sql, orgId, fileId);
  if (!file) throw fileNotFound();
  const refusal = downloadRefusal(file.status);
  if (refusal) throw conflict(refusal);
  const url = await deps.storage.presignGet(file.storage_key, { filename: file.name, expiresInSeconds: URL_TTL_SECONDS });
  return { url, expires_at: expiresAt() };
}

export async function archiveFile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, fileId: string) {
  const row = await files.archiveFile(deps.sql, orgId, fileId);
  if (!row) throw fileNotFound();
  return fileView(row);
}

export async function createFolder(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: { name: string; parent_id?: string | null },
) {
  const parentId = input.parent_id ?? null;
  const row = await deps.sql.begin(async (tx) => {
    if (parentId && !(await files.folderInOrg(tx, orgId, parentId, true))) throw folderNotFound();
    return files.insertFolder(tx, orgId, { id: newId(), parent_id: parentId, name: input.name, created_by: actor });
  });
  return folderView(row);
}

export async function listFolders(deps: Pick<ServiceDeps, 'sql'>, orgId: string, filters: { parent_id?: string }, page: Page) {
  const rows = await files.listFolders(deps.sql, orgId, { parentId: filters.parent_id }, page);
  return { folders: rows.map(folderView), limit: page.limit, offset: page.offset };
}

/** Renames and/or moves a folder (parent_id null: to the top level), refusing a move into its own subtree. */
export async function updateFolder(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  folderId: string,
  patch: { name?: string; parent_id?: string | null },
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send name or parent_id');
  const row = await deps.sql.begin(async (tx) => {
    // Moves of one organization run one at a time, so two crossing moves cannot make a cycle.
    if (patch.parent_id !== undefined) await files.lockFolderTree(tx, orgId);
    if (!(await files.lockFolder(tx, orgId, folderId))) throw folderNotFound();
    if (patch.parent_id) {
      if (!(await files.folderInOrg(tx, orgId, patch.parent_id, true))) throw notFound('Parent folder not found');
      if (await files.isAncestorOrSelf(tx, orgId, folderId, patch.parent_id))
        throw conflict('A folder cannot be moved into itself or one of its subfolders');
    }
    return files.updateFolder(tx, orgId, folderId, patch);
  });
  if (!row) throw folderNotFound();
  return folderView(row);
}

/**
 * Deletes a folder. Without `cascade` only an empty one (no subfolders, no files of any status);
 * with it the whole subtree, and then the objects of its files (best effort, after the commit).
 */
export async function deleteFolder(
  deps: Pick<ServiceDeps, 'sql' | 'storage' | 'logger'>,
  orgId: string,
  folderId: string,
  cascade: boolean,
): Promise<void> {
  const keys = await deps.sql.begin(async (tx) => {
    if (!(await files.lockFolder(tx, orgId, folderId))) throw folderNotFound();
    if (!cascade && (await files.folderHasContent(tx, orgId, folderId)))
      throw conflict('The folder is not empty; delete it with cascade=true');
    const keys = cascade ? await files.lockSubtreeStorageKeys(tx, orgId, folderId) : [];
    await files.deleteFolder(tx, orgId, folderId);
    return keys;
  });
  await removeObjects(
    deps,
    keys.flatMap((key) => [key, uploadKey(key)]),
  );
}

/** Best effort: the rows are already gone, so a failed delete only leaves an orphan object, logged. */
async function removeObjects(deps: Pick<ServiceDeps, 'storage' | 'logger'>, keys: string[]): Promise<void> {
  let failed = 0;
  for (let i = 0; i < keys.length; i += DELETE_CONCURRENCY) {
    const results = await Promise.allSettled(keys.slice(i, i + DELETE_CONCURRENCY).map((key) => deps.storage.delete(key)));
    results.forEach((r, j) => {
      if (r.status === 'rejected') {
        failed += 1;
        deps.logger.warn({ err: r.reason, storage_key: keys[i + j] }, 'could not delete the object of a deleted file');
      }
    });
  }
  if (keys.length > 0) deps.logger.info({ objects: keys.length, failed }, 'objects of a deleted folder removed');
}
