import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DEFAULT_CONTENT_TYPE, assertValidKey, contentDisposition } from './local';
import {
  ObjectExistsError,
  StorageError,
  type ObjectHead,
  type ObjectStorage,
  type PresignPutOptions,
  type PutOptions,
  type StoredObject,
} from './types';

export interface S3Settings {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** An attempt whose connection stays silent this long fails (S3_SOCKET_TIMEOUT_MS); 3 attempts at most. */
  socketTimeoutMs?: number;
}

const DEFAULT_EXPIRES_SECONDS = 900;

interface AwsError {
  name?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

function isNotFound(error: unknown): boolean {
  const e = error as AwsError;
  if (e.name === 'NoSuchBucket' || e.Code === 'NoSuchBucket') return false; // misconfiguration, not a missing object
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

const isPreconditionFailed = (error: unknown) => {
  const e = error as AwsError;
  return e.name === 'PreconditionFailed' || e.Code === 'PreconditionFailed' || e.$metadata?.httpStatusCode === 412;
};

const etagOf = (raw: string | undefined) => (raw ? raw.replace(/^(W\/)?"|"$/g, '') : null);

/** Whole body in memory: PutObject needs a length and a plain stream has none. */
async function toBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export class S3ObjectStorage implements ObjectStorage {
  readonly driver = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
        : {}),
      // Default CRC checksums are not understood by every S3-compatible store, and would leak into
      // presigned URLs that browsers then cannot satisfy.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An idle bound, not a total one: a large transfer may take long, a silent store may not.
      requestHandler: { connectionTimeout: 5_000, socketTimeout: settings.socketTimeoutMs ?? 10_000 },
      maxAttempts: 3,
    });
  }

  async ensureReady(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      const e = error as AwsError;
      const missing = e.name === 'NotFound' || e.name === 'NoSuchBucket' || e.$metadata?.httpStatusCode === 404;
      if (!missing) throw new StorageError(`could not reach bucket ${this.bucket}`, { cause: error });
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      // Another process created it between our HEAD and CREATE.
      if ((error as AwsError).name !== 'BucketAlreadyOwnedByYou') {
        throw new StorageError(`could not create bucket ${this.bucket}`, { cause: error });
      }
    }
  }

  async put(key: string, body: Buffer | Readable | string, options: PutOptions = {}): Promise<void> {
    assertValidKey(key);
    try {
      const payload =
        typeof body === 'string' || Buffer.isBuffer(body) || options.contentLength !== undefined ? body : await toBuffer(body);
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: payload,
          ContentType: options.contentType ?? DEFAULT_CONTENT_TYPE,
          ContentLength: options.contentLength,
          IfNoneMatch: options.createOnly ? '*' : undefined,
        }),
      );
    } catch (error) {
      if (options.createOnly && isPreconditionFailed(error)) throw new ObjectExistsError(`object ${key} already exists`);
      throw new StorageError(`could not write object ${key}`, { cause: error });
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        size: out.ContentLength ?? 0,
        contentType: out.ContentType ?? null,
        etag: etagOf(out.ETag),
        lastModified: out.LastModified ?? null,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new StorageError(`could not read object ${key}`, { cause: error });
    }
  }

  async get(key: string): Promise<StoredObject | undefined> {
    assertValidKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        size: out.ContentLength ?? 0,
        contentType: out.ContentType ?? null,
        etag: etagOf(out.ETag),
        lastModified: out.LastModified ?? null,
        // In Node the SDK's body is the response stream itself.
        body: out.Body as Readable,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new StorageError(`could not read object ${key}`, { cause: error });
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      throw new StorageError(`could not delete object ${key}`, { cause: error });
    }
  }

  async presignPut(key: string, options: PresignPutOptions = {}): Promise<string> {
    assertValidKey(key);
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentType: options.contentType,
      ContentLength: options.contentLength,
      IfNoneMatch: options.createOnly ? '*' : undefined,
    });
    // Sign the headers too, or the uploader could store any type and any length it likes, or replace
    // an object a create-only URL already wrote (S3 then answers 412). maxBytes has no equivalent in a
    // presigned PUT: the caller checks the stored size afterwards.
    const signed = [
      ...(options.contentType === undefined ? [] : ['content-type']),
      ...(options.contentLength === undefined ? [] : ['content-length']),
      ...(options.createOnly ? ['if-none-match'] : []),
    ];
    return this.presign(command, options.expiresInSeconds, signed.length ? new Set(signed) : undefined);
  }

  async move(from: string, to: string, options: { ifEtag?: string } = {}): Promise<void> {
    assertValidKey(from);
    assertValidKey(to);
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: to,
          CopySource: `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
          CopySourceIfMatch: options.ifEtag === undefined ? undefined : `"${options.ifEtag}"`,
          MetadataDirective: 'COPY',
        }),
      );
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: from }));
    } catch (error) {
      throw new StorageError(`could not move object ${from}`, { cause: error });
    }
  }

  async presignGet(key: string, options: { expiresInSeconds?: number; filename?: string } = {}): Promise<string> {
    assertValidKey(key);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: options.filename === undefined ? undefined : contentDisposition(options.filename),
    });
    return this.presign(command, options.expiresInSeconds);
  }

  private async presign(
    command: PutObjectCommand | GetObjectCommand,
    expiresIn = DEFAULT_EXPIRES_SECONDS,
    signableHeaders?: Set<string>,
  ): Promise<string> {
    try {
      return await getSignedUrl(this.client, command, { expiresIn, signableHeaders });
    } catch (error) {
      throw new StorageError('could not presign a URL', { cause: error });
    }
  }
}
