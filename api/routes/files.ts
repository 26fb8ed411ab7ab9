import type { z } from 'zod';
import * as files from '../../db/files';
import type { FileRow, FolderRow } from '../../db/files';
import { newId } from '../../platform/ids';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest, conflict, notFound } from '../errors';
import { cappedLimit } from '../list-filters';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, iso } from '../schemas/common';
import {
  CreateFolderBody,
  DeleteFolderQuery,
  DownloadUrl,
  FILE_LIST_MAX,
  FOLDER_LIST_MAX,
  File,
  FileList,
  FileListQuery,
  FileParams,
  Folder,
  FolderList,
  FolderListQuery,
  FolderParams,
  InitiateUploadBody,
  InitiatedUpload,
  PatchFolderBody,
} from '../schemas/files';

/** How long presigned upload and download URLs stay valid. */
const URL_TTL_SECONDS = 900;
/** Object deletions after a cascading folder delete run this many at a time. */
const DELETE_CONCURRENCY = 8;


export const fileView = (row: FileRow): z.output<typeof File> => ({
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

const folderView = (row: FolderRow): z.output<typeof Folder> => ({
  id: row.id,
  parent_id: row.parent_id,
  name: row.name,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/** Objects live under their organization; the key never carries the caller's file name. */
const storageKey = (orgId: string, fileId: string) => `orgs/${orgId}/files/${fileId}`;
const expiresAt = () => new Date(Date.now() + URL_TTL_SECONDS * 1000).toISOString();

const fileNotFound = () => notFound('File not found');
const folderNotFound = () => notFound('Folder not found');
const storageFailed = { 502: { description: 'Object storage failed', schema: ErrorBody } } as const;
const folderConflict = { 409: { description: 'A sibling folder has this name', schema: ErrorBody } } as const;

async function writing<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof files.DuplicateFolderError) throw conflict(error.message);
    if (error instanceof files.MissingFolderError) throw folderNotFound();
    throw error;
  }
}

/** Best effort: the rows are already gone, so a failed delete only leaves an orphan object, logged. */
async function removeObjects(deps: AppDeps, keys: string[]): Promise<void> {
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

export function registerFileRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, storage } = deps;

  routes.add({
    method: 'post',
    path: '/files/initiate-upload',
    tag: 'CRM',
    summary: 'Create a file record and a presigned URL to PUT its bytes to',
    auth: { scope: 'crmManage' },
    body: InitiateUploadBody,
    responses: {
      200: { description: 'The file, pending upload, with its upload URL', schema: InitiatedUpload },
      ...authErrors,
      404: { description: 'folder_id is not a folder of the organization', schema: ErrorBody },
      ...validationError,
      ...storageFailed,
    },
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      const id = newId();
      const key = storageKey(orgId, id);
      const folderId = body.folder_id ?? null;
      // Row and URL together: if signing fails the row is rolled back.
      const { row, url } = await writing(() =>
        sql.begin(async (tx) => {
          if (folderId && !(await files.folderInOrg(tx, orgId, folderId, true))) throw folderNotFound();
          const row = await files.insertFile(tx, {
            id,
            org_id: orgId,
            folder_id: folderId,
            name: body.name,
            content_type: body.content_type,
            size_bytes: body.size_bytes ?? null,
            storage_key: key,
            created_by: actor(auth),
          });
          const url = await storage.presignPut(key, { contentType: body.content_type, expiresInSeconds: URL_TTL_SECONDS });
          return { row, url };
        }),
      );
      return reply(200, {
        ...fileView(row),
        upload_url: url,
        upload_method: 'PUT',
        upload_headers: { 'Content-Type': body.content_type },
        upload_expires_at: expiresAt(),
      });
    },
  });

  routes.add({
    method: 'get',
    path: '/files/list',
    tag: 'CRM',
    summary: 'List files, newest first (archived ones only with status=archived)',
    auth: { scope: 'crmRead' },
    query: FileListQuery,
    responses: {
      200: { description: 'A page of files', schema: FileList },
      400: { description: 'Unknown filter or invalid status', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => {
      const status = query.status;
      const limit = cappedLimit(query.limit, FILE_LIST_MAX);
      const rows = await files.listFiles(sql, orgOf(auth), { folderId: query.folder_id, status }, { limit, offset: query.offset });
      return { files: rows.map(fileView), limit, offset: query.offset };
    },
  });

  routes.add({
    method: 'get',
    path: '/files/{file_id}',
    tag: 'CRM',
    summary: 'Read one file record',
    auth: { scope: 'crmRead' },
    params: FileParams,
    responses: { 200: { description: 'The file', schema: File }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await files.getFile(sql, orgOf(auth), params.file_id);
      if (!row) throw fileNotFound();
      return fileView(row);
    },
  });

  routes.add({
    method: 'post',
    path: '/files/{file_id}/confirm-upload',
    tag: 'CRM',
    summary: 'Confirm an upload: the object is checked in object storage and the file marked uploaded',
    auth: { scope: 'crmManage' },
    params: FileParams,
    responses: {
      200: { description: 'The file with status uploaded', schema: File },
      ...authErrors,
      404: { description: 'Unknown, another organization’s, or archived file', schema: ErrorBody },
      409: { description: 'The object is not in object storage yet; retry shortly', schema: ErrorBody },
      ...validationError,
      ...storageFailed,
    },
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      const file = await files.getFile(sql, orgId, params.file_id);
      if (!file || file.status === 'archived') throw fileNotFound();
      // Every call re-checks the store, so a repeat is an idempotent re-verification. A StorageError
      // from head reaches the error handler as 502.
      const head = await storage.head(file.storage_key);
      if (!head) throw conflict('The uploaded object is not in object storage yet; retry shortly');
      const row = await files.markUploaded(sql, orgId, file.id, head.size);
      if (!row) throw fileNotFound(); // archived meanwhile
      return fileView(row);
    },
  });

  routes.add({
    method: 'get',
    path: '/files/{file_id}/download-url',
    tag: 'CRM',
    summary: 'A presigned URL to download an uploaded file',
    auth: { scope: 'crmRead' },
    params: FileParams,
    responses: {
      200: { description: 'The URL and its expiry', schema: DownloadUrl },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The file is not uploaded (pending upload or archived)', schema: ErrorBody },
      ...validationError,
      ...storageFailed,
    },
    handler: async ({ params, auth }) => {
      const file = await files.getFile(sql, orgOf(auth), params.file_id);
      if (!file) throw fileNotFound();
      if (file.status !== 'uploaded') throw conflict(`The file is ${file.status.replace('_', ' ')}; only uploaded files can be downloaded`);
      const url = await storage.presignGet(file.storage_key, { filename: file.name, expiresInSeconds: URL_TTL_SECONDS });
      return { url, expires_at: expiresAt() };
    },
  });

  routes.add({
    method: 'post',
    path: '/files/{file_id}/archive',
    tag: 'CRM',
    summary: 'Archive a file (idempotent); its object is kept',
    auth: { scope: 'crmManage' },
    params: FileParams,
    responses: { 200: { description: 'The archived file', schema: File }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await files.archiveFile(sql, orgOf(auth), params.file_id);
      if (!row) throw fileNotFound();
      return fileView(row);
    },
  });

  routes.add({
    method: 'post',
    path: '/folders',
    tag: 'CRM',
    summary: 'Create a folder (at the top level, or inside parent_id)',
    auth: { scope: 'crmManage' },
    body: CreateFolderBody,
    responses: {
      200: { description: 'Created', schema: Folder },
      ...authErrors,
      404: { description: 'parent_id is not a folder of the organization', schema: ErrorBody },
      ...folderConflict,
      ...validationError,
    },
    handler: async ({ body, auth }) => {
      const orgId = orgOf(auth);
      const parentId = body.parent_id ?? null;
      const row = await writing(() =>
        sql.begin(async (tx) => {
          if (parentId && !(await files.folderInOrg(tx, orgId, parentId, true))) throw folderNotFound();
          return files.insertFolder(tx, { id: newId(), org_id: orgId, parent_id: parentId, name: body.name, created_by: actor(auth) });
        }),
      );
      return reply(200, folderView(row));
    },
  });

  routes.add({
    method: 'get',
    path: '/folders',
    tag: 'CRM',
    summary: 'List folders by name (all, or the children of parent_id)',
    auth: { scope: 'crmRead' },
    query: FolderListQuery,
    responses: {
      200: { description: 'A page of folders', schema: FolderList },
      400: { description: 'Unknown filter', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => {
      const limit = cappedLimit(query.limit, FOLDER_LIST_MAX);
      const rows = await files.listFolders(sql, orgOf(auth), { parentId: query.parent_id }, { limit, offset: query.offset });
      return { folders: rows.map(folderView), limit, offset: query.offset };
    },
  });

  routes.add({
    method: 'patch',
    path: '/folders/{folder_id}',
    tag: 'CRM',
    summary: 'Rename a folder or move it (parent_id null moves it to the top level)',
    auth: { scope: 'crmManage' },
    params: FolderParams,
    body: PatchFolderBody,
    responses: {
      200: { description: 'The updated folder', schema: Folder },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      409: { description: 'A sibling has the name, or the move would put the folder inside itself', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Empty patch body: send name or parent_id');
      const result = await writing(() => files.updateFolder(sql, orgOf(auth), params.folder_id, body));
      if (result === 'not_found') throw folderNotFound();
      if (result === 'parent_not_found') throw notFound('Parent folder not found');
      if (result === 'cycle') throw conflict('A folder cannot be moved into itself or one of its subfolders');
      return folderView(result);
    },
  });

  routes.add({
    method: 'delete',
    path: '/folders/{folder_id}',
    tag: 'CRM',
    summary: 'Delete a folder; a non-empty one only with cascade=true, which deletes its subfolders, files and their objects',
    auth: { scope: 'crmManage' },
    params: FolderParams,
    query: DeleteFolderQuery,
    responses: {
      204: { description: 'Deleted' },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The folder is not empty and cascade=true was not given', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, query, auth }) => {
      const result = await files.deleteFolder(sql, orgOf(auth), params.folder_id, query.cascade === 'true');
      if (!result.deleted && result.reason === 'not_found') throw folderNotFound();
      if (!result.deleted) throw conflict('The folder is not empty; delete it with cascade=true');
      await removeObjects(deps, result.storageKeys);
      return reply(204);
    },
  });
}
