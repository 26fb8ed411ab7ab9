import type { Readable } from 'node:stream';

export interface ObjectHead {
  size: number;
  contentType: string | null;
  etag: string | null;
  lastModified: Date | null;
}

export interface StoredObject extends ObjectHead {
  body: Readable;
}

/**
 * Object storage, the one interface the service uses; drivers: local disk and S3. head/get answer
 * undefined for a missing object and throw StorageError when the store itself fails, which callers
 * turn into 502.
 */
export interface ObjectStorage {
  readonly driver: 'local' | 's3';
  put(key: string, body: Buffer | Readable | string, options?: { contentType?: string; contentLength?: number }): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  head(key: string): Promise<ObjectHead | undefined>;
  delete(key: string): Promise<void>;
  presignPut(key: string, options?: { expiresInSeconds?: number; contentType?: string }): Promise<string>;
  presignGet(key: string, options?: { expiresInSeconds?: number; filename?: string }): Promise<string>;
  /** Creates the bucket or directory when missing. */
  ensureReady(): Promise<void>;
}

export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
