/** A file's states: created pending upload, uploaded once its object is confirmed, archived at will. */
export const FILE_STATUSES = ['pending_upload', 'uploaded', 'archived'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/** The largest object a presigned upload URL is issued for (5 GiB, one S3 PUT). */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3;

/** How long presigned upload and download URLs stay valid. */
export const URL_TTL_SECONDS = 900;

/** Objects live under their organization; the key never carries the caller's file name. */
export const storageKey = (orgId: string, fileId: string) => `orgs/${orgId}/files/${fileId}`;

/** Only an uploaded file can be downloaded. */
export const downloadRefusal = (status: FileStatus): string | null =>
  status === 'uploaded' ? null : `The file is ${status.replace('_', ' ')}; only uploaded files can be downloaded`;
