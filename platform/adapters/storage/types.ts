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
  put(key: string, body: Buffer | Readable | string, options?: PutOptions): Promise<void>;
  get(key: string): Promise<StoredObject | undefined>;
  head(key: string): Promise<ObjectHead | undefined>;
  delete(key: string): Promise<void>;
  /**
   * A URL to PUT one object. `contentLength` binds the upload to exactly that many bytes (S3: a signed
   * Content-Length header; local: checked while streaming); `maxBytes` bounds it where the driver can
   * (local only: a presigned S3 PUT has no range, so callers re-check the stored size).
   */
  presignPut(key: string, options?: PresignPutOptions): Promise<string>;
  /** Moves an object to another key (server-side); with `ifEtag`, only that version of it. */
  move(from: string, to: string, options?: { ifEtag?: string }): Promise<void>;
  presignGet(key: string, options?: { expiresInSeconds?: number; filename?: string }): Promise<string>;
  /** Creates the bucket or directory when missing. */
  ensureReady(): Promise<void>;
}

export interface PutOptions {
  contentType?: string;
  /** The body must be exactly this long (LengthMismatchError otherwise). */
  contentLength?: number;
  /** The body may be at most this long; refused while streaming (ObjectTooLargeError). */
  maxBytes?: number;
  /** Only create: when the key already holds an object nothing is written (ObjectExistsError). */
  createOnly?: boolean;
}

export interface PresignPutOptions {
  expiresInSeconds?: number;
  contentType?: string;
  contentLength?: number;
  maxBytes?: number;
  /**
   * The URL may only create the object, never replace it: it is signed for `If-None-Match: *`, which
   * the uploader must send (S3 answers 412 while the key holds an object; the local route 409).
   */
  createOnly?: boolean;
}

/** A body longer than the upload allows: the uploader's mistake (413), nothing is stored. */
export class ObjectTooLargeError extends Error {}
/** A body whose length is not the one declared: the uploader's mistake (400), nothing is stored. */
export class LengthMismatchError extends Error {}

/** A create-only write found the key already holding an object: nothing was written. */
export class ObjectExistsError extends Error {}

export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
