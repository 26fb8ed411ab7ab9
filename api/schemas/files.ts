import { trimmedText } from '../../domain/trimmed-text';
import { z } from 'zod';
import { FILE_STATUSES, MAX_UPLOAD_BYTES } from '../../domain/files';
import { Uuid, cappedLimit, offsetQuery } from './common';

const ContentType = z
  .string()
  .max(255)
  .regex(/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[^;]+)*$/, 'must be a media type like text/csv')
  .openapi({ example: 'application/pdf' });

export const File = z
  .object({
    id: Uuid,
    folder_id: Uuid.nullable(),
    name: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int().nullable().openapi({ description: 'Declared at initiate-upload; the stored size once uploaded' }),
    status: z.enum(FILE_STATUSES),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    uploaded_at: z.string().nullable(),
    archived_at: z.string().nullable(),
  })
  .openapi('File');

/** The body, with the deployment's UPLOAD_MAX_BYTES as the maximum of size_bytes: above it is 422, as any bound the document states. */
export const InitiateUploadBody = (maxBytes: number) =>
  z
    .strictObject({
      name: z.string().min(1).max(255),
      content_type: ContentType,
      size_bytes: z
        .number()
        .int()
        .min(0)
        .max(Math.min(maxBytes, MAX_UPLOAD_BYTES))
        .optional()
        .openapi({ description: `At most ${maxBytes} bytes (UPLOAD_MAX_BYTES)` }),
      folder_id: Uuid.nullable().optional(),
    })
    .openapi('InitiateUploadRequest');

export const InitiatedUpload = File.extend({
  upload_url: z.string().openapi({
    description:
      'PUT the bytes here, with upload_headers (If-None-Match: * among them), before upload_expires_at; single-use: once the object exists the store refuses another PUT (S3 412, local 409)',
  }),
  upload_method: z.literal('PUT'),
  upload_headers: z.record(z.string(), z.string()),
  upload_expires_at: z.string(),
}).openapi('InitiatedUpload');

export const FileParams = z.object({ file_id: Uuid });

export const FileListQuery = z.object({
  folder_id: Uuid.optional().openapi({ description: 'Files directly in this folder' }),
  status: z.enum(FILE_STATUSES).optional().openapi({ description: 'Archived files are listed only when asked for' }),
  limit: cappedLimit(50, 200, 'Default 50; values above 200 are served as 200'),
  offset: offsetQuery(),
});
export const FILE_LIST_MAX = 200;

export const FileList = z.object({ files: z.array(File), limit: z.number().int(), offset: z.number().int() }).openapi('FileList');

export const DownloadUrl = z.object({ url: z.string(), expires_at: z.string() }).openapi('DownloadUrl');

const FolderName = trimmedText(255, '/');

export const Folder = z
  .object({
    id: Uuid,
    parent_id: Uuid.nullable(),
    name: z.string(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Folder');

export const CreateFolderBody = z.strictObject({ name: FolderName, parent_id: Uuid.nullable().optional() }).openapi('FolderCreate');
export const PatchFolderBody = z.strictObject({ name: FolderName, parent_id: Uuid.nullable() }).partial().openapi('FolderPatch');

export const FolderParams = z.object({ folder_id: Uuid });

export const FolderListQuery = z.object({
  parent_id: Uuid.optional().openapi({ description: 'Only the direct children of this folder; all folders when absent' }),
  limit: cappedLimit(200, 500, 'Default 200; values above 500 are served as 500'),
  offset: offsetQuery(),
});
export const FOLDER_LIST_MAX = 500;

export const FolderList = z.object({ folders: z.array(Folder), limit: z.number().int(), offset: z.number().int() }).openapi('FolderList');

export const DeleteFolderQuery = z.object({
  cascade: z
    .enum(['true', 'false'])
    .default('false')
    .openapi({ description: 'true deletes a non-empty folder with its subfolders and files' }),
});
