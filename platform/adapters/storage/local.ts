import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  LengthMismatchError,
  ObjectExistsError,
  ObjectTooLargeError,
  StorageError,
  type ObjectHead,
  type ObjectStorage,
  type PresignPutOptions,
  type PutOptions,
  type StoredObject,
} from './types';

// The local-disk driver: one file per key under root, its content type and etag in a sidecar
// `<file>.meta.json`. Presigned URLs point at the API's own /storage/objects route and carry an
// HMAC, so browsers upload and download exactly as they would against S3.

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
const DEFAULT_EXPIRES_SECONDS = 900;
const META_SUFFIX = '.meta.json';

/** A key the store refuses; a caller's mistake, not a store failure (so not a StorageError). */
export class InvalidKeyError extends Error {}

/** Key rules shared by both drivers, so what is accepted never depends on the driver. */
export function assertValidKey(key: string): void {
  const bad =
    key.length === 0 ||
    Buffer.byteLength(key) > 1024 ||
    key.startsWith('/') ||
    /[\\\0]/.test(key) ||
    key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..') ||
    key.endsWith(META_SUFFIX);
  if (bad) throw new InvalidKeyError(`invalid object key: ${JSON.stringify(key)}`);
}

/** An attachment Content-Disposition with an ASCII fallback and the exact UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export interface SignedRequest {
  method: 'GET' | 'PUT';
  key: string;
  expires?: string;
  signature?: string;
  contentType?: string;
  filename?: string;
  /** PUT only: the exact length, or the most, the upload may have (decimal strings, as in the URL). */
  contentLength?: string;
  maxBytes?: string;
  /** PUT only: `*` when the URL may only create the object (the uploader sends `If-None-Match: *`). */
  ifNoneMatch?: string;
}

interface Meta {
  contentType: string | null;
  etag: string | null;
}

const isMissing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

export class LocalObjectStorage implements ObjectStorage {
  readonly driver = 'local' as const;
  private readonly root: string;

  constructor(
    root: string,
    private readonly signingKey: Buffer,
    private readonly publicBaseUrl: string,
  ) {
    this.root = path.resolve(root);
  }

  async ensureReady(): Promise<void> {
    await this.wrap('create the storage directory', () => fs.promises.mkdir(this.root, { recursive: true }));
  }

  async put(key: string, body: Buffer | Readable | string, options: PutOptions = {}): Promise<void> {
    const file = this.fileOf(key);
    const md5 = crypto.createHash('md5');
    let size = 0;
    // The most bytes accepted: over it the write stops at once, before the rest is read.
    const limit = Math.min(options.contentLength ?? Infinity, options.maxBytes ?? Infinity);
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limit) return done(new ObjectTooLargeError(`body is larger than ${limit} bytes`));
        md5.update(chunk);
        done(null, chunk);
      },
    });
    const source = typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([Buffer.from(body)]) : body;
    const tmp = `${file}.${crypto.randomBytes(8).toString('hex')}.tmp`;
    try {
      await fs.promises.mkdir(path.dirname(file), { recursive: true });
      await pipeline(source, tap, fs.createWriteStream(tmp, { flags: 'wx' }));
      if (options.contentLength !== undefined && options.contentLength !== size) {
        throw new LengthMismatchError(`body was ${size} bytes, expected ${options.contentLength}`);
      }
      const meta: Meta = { contentType: options.contentType ?? DEFAULT_CONTENT_TYPE, etag: md5.digest('hex') };
      await fs.promises.writeFile(`${tmp}.meta`, JSON.stringify(meta), { flag: 'wx' });
      // Data first, then meta: a reader may briefly see new bytes with the old type, never a torn file.
      // A create-only write links instead of renaming: link fails atomically when the key is taken.
      if (options.createOnly) {
        await fs.promises.link(tmp, file).catch((error: NodeJS.ErrnoException) => {
          throw error.code === 'EEXIST' ? new ObjectExistsError(`object ${key} already exists`) : error;
        });
        await fs.promises.rm(tmp, { force: true });
      } else await fs.promises.rename(tmp, file);
      await fs.promises.rename(`${tmp}.meta`, file + META_SUFFIX);
    } catch (error) {
      await Promise.allSettled([fs.promises.rm(tmp, { force: true }), fs.promises.rm(`${tmp}.meta`, { force: true })]);
      if (
        error instanceof StorageError ||
        error instanceof ObjectTooLargeError ||
        error instanceof LengthMismatchError ||
        error instanceof ObjectExistsError
      )
        throw error;
      throw new StorageError(`could not write object ${key}`, { cause: error });
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    const file = this.fileOf(key);
    return this.wrap(`read object ${key}`, async () => {
      const stat = await fs.promises.stat(file).catch((error) => (isMissing(error) ? undefined : Promise.reject(error)));
      if (!stat?.isFile()) return undefined;
      return this.describe(file, stat);
    });
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const file = this.fileOf(key);
    return this.wrap(`read object ${key}`, async () => {
      // Open first, so a missing file is an answer here rather than an error on the stream.
      const handle = await fs.promises.open(file, 'r').catch((error) => (isMissing(error) ? undefined : Promise.reject(error)));
      if (!handle) return undefined;
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) {
          await handle.close();
          return undefined;
        }
        return { ...(await this.describe(file, stat)), body: handle.createReadStream() };
      } catch (error) {
        await handle.close();
        throw error;
      }
    });
  }

  async delete(key: string): Promise<void> {
    const file = this.fileOf(key);
    await this.wrap(`delete object ${key}`, () =>
      Promise.all([fs.promises.rm(file, { force: true }), fs.promises.rm(file + META_SUFFIX, { force: true })]),
    );
  }

  async presignPut(key: string, options: PresignPutOptions = {}): Promise<string> {
    const request: SignedRequest = { method: 'PUT', key, contentType: options.contentType };
    if (options.contentLength !== undefined) request.contentLength = String(options.contentLength);
    if (options.maxBytes !== undefined) request.maxBytes = String(options.maxBytes);
    if (options.createOnly) request.ifNoneMatch = '*';
    return this.presign(request, options.expiresInSeconds);
  }

  async move(from: string, to: string, options: { ifEtag?: string } = {}): Promise<void> {
    const source = this.fileOf(from);
    const target = this.fileOf(to);
    await this.wrap(`move object ${from}`, async () => {
      if (options.ifEtag !== undefined && (await this.head(from))?.etag !== options.ifEtag) throw new Error('the object changed');
      await fs.promises.mkdir(path.dirname(target), { recursive: true });
      // Data then meta, as put does; each rename is atomic.
      await fs.promises.rename(source, target);
      await fs.promises
        .rename(source + META_SUFFIX, target + META_SUFFIX)
        .catch((error) => (isMissing(error) ? undefined : Promise.reject(error)));
    });
  }

  async presignGet(key: string, options: { expiresInSeconds?: number; filename?: string } = {}): Promise<string> {
    return this.presign({ method: 'GET', key, filename: options.filename }, options.expiresInSeconds);
  }

  /** True when the request carries this store's unexpired signature for exactly these values. */
  verify(request: SignedRequest, nowMs = Date.now()): boolean {
    const expires = Number(request.expires);
    if (!/^\d+$/.test(request.expires ?? '') || expires * 1000 < nowMs) return false;
    if (!/^[0-9a-f]{64}$/.test(request.signature ?? '')) return false;
    const expected = Buffer.from(this.sign(request, expires), 'hex');
    return crypto.timingSafeEqual(expected, Buffer.from(request.signature!, 'hex'));
  }

  private presign(request: SignedRequest, expiresInSeconds = DEFAULT_EXPIRES_SECONDS): string {
    assertValidKey(request.key);
    const expires = Math.floor(Date.now() / 1000) + expiresInSeconds;
    const url = new URL(`${this.publicBaseUrl.replace(/\/+$/, '')}/storage/objects/${encodeURIComponent(request.key)}`);
    url.searchParams.set('method', request.method);
    url.searchParams.set('expires', String(expires));
    if (request.contentType !== undefined) url.searchParams.set('content_type', request.contentType);
    if (request.filename !== undefined) url.searchParams.set('filename', request.filename);
    if (request.contentLength !== undefined) url.searchParams.set('content_length', request.contentLength);
    if (request.maxBytes !== undefined) url.searchParams.set('max_bytes', request.maxBytes);
    if (request.ifNoneMatch !== undefined) url.searchParams.set('if_none_match', request.ifNoneMatch);
    url.searchParams.set('signature', this.sign(request, expires));
    return url.toString();
  }

  private sign(request: SignedRequest, expires: number): string {
    // A JSON array is an unambiguous encoding: no value can shift into its neighbour.
    const payload = JSON.stringify([
      request.method,
      request.key,
      expires,
      request.contentType ?? null,
      request.filename ?? null,
      request.contentLength ?? null,
      request.maxBytes ?? null,
      // Appended only when present, so URLs signed before the field existed still verify.
      ...(request.ifNoneMatch === undefined ? [] : [request.ifNoneMatch]),
    ]);
    return crypto.createHmac('sha256', this.signingKey).update(payload).digest('hex');
  }

  private fileOf(key: string): string {
    assertValidKey(key);
    const file = path.resolve(this.root, key);
    // Belt and braces on top of the key rules.
    if (!file.startsWith(this.root + path.sep)) throw new InvalidKeyError(`invalid object key: ${JSON.stringify(key)}`);
    return file;
  }

  private async describe(file: string, stat: fs.Stats): Promise<ObjectHead> {
    const meta = await fs.promises
      .readFile(file + META_SUFFIX, 'utf8')
      .then((text) => JSON.parse(text) as Meta)
      .catch((error) => (isMissing(error) ? { contentType: null, etag: null } : Promise.reject(error)));
    return { size: stat.size, contentType: meta.contentType, etag: meta.etag, lastModified: stat.mtime };
  }

  private async wrap<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      throw new StorageError(`could not ${what}`, { cause: error });
    }
  }
}

/** Checks a request to the local /storage/objects route against the store that signed it. */
export function verifyLocalSignature(storage: ObjectStorage, request: SignedRequest, nowMs = Date.now()): boolean {
  return storage instanceof LocalObjectStorage && storage.verify(request, nowMs);
}
