import * as files from '../../services/files';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { cappedLimit } from '../list-filters';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
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

const storageFailed = { 502: { description: 'Object storage failed', schema: ErrorBody } } as const;
const folderConflict = { 409: { description: 'A sibling folder has this name', schema: ErrorBody } } as const;

export function registerFileRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/files/initiate-upload',
    tag: 'CRM',
    summary: 'Create a file record and a presigned URL to PUT its bytes to',
    auth: { scope: 'crmManage' },
    body: InitiateUploadBody(deps.config.UPLOAD_MAX_BYTES),
    responses: {
      200: { description: 'The file, pending upload, with its upload URL', schema: InitiatedUpload },
      ...authErrors,
      404: { description: 'folder_id is not a folder of the organization', schema: ErrorBody },
      ...validationError,
      ...storageFailed,
    },
    handler: async ({ body, auth }) => reply(200, await files.initiateUpload(deps, orgOf(auth), actor(auth), body)),
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
    handler: async ({ query, auth }) =>
      files.listFiles(deps, orgOf(auth), query, { limit: cappedLimit(query.limit, FILE_LIST_MAX), offset: query.offset }),
  });

  routes.add({
    method: 'get',
    path: '/files/{file_id}',
    tag: 'CRM',
    summary: 'Read one file record',
    auth: { scope: 'crmRead' },
    params: FileParams,
    responses: { 200: { description: 'The file', schema: File }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => files.getFile(deps, orgOf(auth), params.file_id),
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
      409: {
        description:
          'The object is not in object storage yet (retry shortly), or it differs from the declared size or content type or exceeds the maximum file size (it is removed and the file stays pending: upload again)',
        schema: ErrorBody,
      },
      ...validationError,
      ...storageFailed,
    },
    handler: async ({ params, auth }) => files.confirmUpload(deps, orgOf(auth), params.file_id),
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
    handler: async ({ params, auth }) => files.downloadUrl(deps, orgOf(auth), params.file_id),
  });

  routes.add({
    method: 'post',
    path: '/files/{file_id}/archive',
    tag: 'CRM',
    summary: 'Archive a file (idempotent); its object is kept',
    auth: { scope: 'crmManage' },
    params: FileParams,
    responses: { 200: { description: 'The archived file', schema: File }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => files.archiveFile(deps, orgOf(auth), params.file_id),
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
    handler: async ({ body, auth }) => reply(200, await files.createFolder(deps, orgOf(auth), actor(auth), body)),
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
    handler: async ({ query, auth }) =>
      files.listFolders(deps, orgOf(auth), query, { limit: cappedLimit(query.limit, FOLDER_LIST_MAX), offset: query.offset }),
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
    handler: async ({ params, body, auth }) => files.updateFolder(deps, orgOf(auth), params.folder_id, body),
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
      await files.deleteFolder(deps, orgOf(auth), params.folder_id, query.cascade === 'true');
      return reply(204);
    },
  });
}
