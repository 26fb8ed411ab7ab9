import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../platform/core/config';
import { freePort } from '../../dev-servers/ports';
import { InvalidKeyError, ObjectExistsError, StorageError, createStorage, type ObjectStorage } from '../../platform/adapters/storage';
import { createTestContext, type TestContext } from '../support/context';

// One suite, both drivers: the local disk behind the real app (its presigned URLs are served by
// /storage/objects) and S3 against the run's S3 server, each with its own directory or bucket.

interface Driver {
  storage: ObjectStorage;
  /** A store of the same kind whose backing service cannot be used. */
  broken(): Promise<ObjectStorage>;
  close(): Promise<void>;
}

const signingKey = crypto.randomBytes(32);
const md5 = (value: string) => crypto.createHash('md5').update(value).digest('hex');
const unique = () => crypto.randomBytes(6).toString('hex');

function s3Config(endpoint: string, bucket: string) {
  const s3 = inject('s3');
  return loadConfig({
    DATA_DIR: fs.mkdtempSync(path.join(inject('scratchDir'), 's3-cfg-')),
    S3_ENDPOINT: endpoint,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_REGION: s3.region,
    S3_BUCKET: bucket,
  });
}

const drivers: Record<'local' | 's3', () => Promise<Driver>> = {
  async local() {
    const ctx: TestContext = await createTestContext();
    expect(ctx.deps.storage.driver).toBe('local');
    return {
      storage: ctx.deps.storage,
      async broken() {
        // The objects directory sits under a plain file, so nothing can be created there.
        const file = path.join(ctx.config.dataDir, 'not-a-directory');
        fs.writeFileSync(file, '');
        const config = loadConfig({ DATA_DIR: file });
        return createStorage(config, { signingKey, publicBaseUrl: ctx.baseUrl });
      },
      close: () => ctx.close(),
    };
  },
  async s3() {
    const storage = createStorage(s3Config(inject('s3').endpoint, `storage-${unique()}`), { signingKey, publicBaseUrl: 'http://unused' });
    await storage.ensureReady();
    return {
      storage,
      async broken() {
        const port = await freePort(); // nothing listens there
        return createStorage(s3Config(`http://127.0.0.1:${port}`, 'closed'), { signingKey, publicBaseUrl: 'http://unused' });
      },
      close: async () => {},
    };
  },
};

describe.each(['local', 's3'] as const)('object storage: %s driver', (name) => {
  let driver: Driver;
  let storage: ObjectStorage;
  const key = (suffix: string) => `orgs/${unique()}/files/${suffix}`;

  beforeAll(async () => {
    driver = await drivers[name]();
    storage = driver.storage;
  });
  afterAll(async () => {
    await driver?.close();
  });

  it('ensureReady is idempotent: a second call succeeds and keeps what is stored', async () => {
    const k = key('kept.txt');
    await storage.ensureReady();
    await storage.put(k, 'kept', { contentType: 'text/plain' });
    await expect(storage.ensureReady()).resolves.toBeUndefined();
    expect(await storage.head(k)).toMatchObject({ size: 4, etag: md5('kept') });
  });

  it('puts, heads, gets and deletes an object', async () => {
    const k = key('notes.txt');
    await storage.put(k, 'hello world', { contentType: 'text/plain' });
    const head = await storage.head(k);
    expect(head).toMatchObject({ size: 11, contentType: 'text/plain', etag: md5('hello world') });
    expect(Math.abs(Date.now() - head!.lastModified!.getTime())).toBeLessThan(60_000);
    const object = await storage.get(k);
    expect(object).toMatchObject({ size: 11, contentType: 'text/plain', etag: md5('hello world') });
    expect(await text(object!.body)).toBe('hello world');
    await storage.delete(k);
    expect(await storage.head(k)).toBeUndefined();
    expect(await storage.get(k)).toBeUndefined();
  });

  it('answers undefined for a missing object, and deleting one is not an error', async () => {
    const k = key('missing.bin');
    expect(await storage.head(k)).toBeUndefined();
    expect(await storage.get(k)).toBeUndefined();
    await expect(storage.delete(k)).resolves.toBeUndefined();
    expect(await storage.head(k)).toBeUndefined();
  });

  it('overwrites an object whole', async () => {
    const k = key('doc.json');
    await storage.put(k, Buffer.from('{"version":1,"padding":"xxxxxxxx"}'), { contentType: 'application/json' });
    await storage.put(k, '{"version":2}', { contentType: 'application/json' });
    const object = await storage.get(k);
    expect(await text(object!.body)).toBe('{"version":2}');
    expect(object).toMatchObject({ size: 13, etag: md5('{"version":2}') });
  });

  it('a create-only put never replaces an object: ObjectExistsError, the first one stays', async () => {
    const k = key('once.txt');
    await storage.put(k, 'first', { contentType: 'text/plain', createOnly: true });
    await expect(storage.put(k, 'second', { contentType: 'text/plain', createOnly: true })).rejects.toBeInstanceOf(ObjectExistsError);
    expect(await text((await storage.get(k))!.body)).toBe('first');
  });

  it('stores a stream, with or without a known length, and defaults the content type', async () => {
    const unknown = key('stream-a');
    await storage.put(unknown, Readable.from([Buffer.from('abc'), Buffer.from('def')]));
    expect(await storage.head(unknown)).toMatchObject({ size: 6, contentType: 'application/octet-stream', etag: md5('abcdef') });
    const known = key('stream-b');
    await storage.put(known, Readable.from([Buffer.from('xyz')]), { contentLength: 3, contentType: 'image/png' });
    expect(await storage.head(known)).toMatchObject({ size: 3, contentType: 'image/png' });
  });

  it('uploads through a presigned PUT, then head shows the object', async () => {
    const k = key('folder/sub dir/naïve report.csv');
    const url = await storage.presignPut(k, { contentType: 'text/csv' });
    const response = await fetch(url, { method: 'PUT', body: 'a,b\n1,2\n', headers: { 'Content-Type': 'text/csv' } });
    expect(response.status).toBeLessThan(300);
    expect(await storage.head(k)).toMatchObject({ size: 8, contentType: 'text/csv', etag: md5('a,b\n1,2\n') });
  });

  it('downloads through a presigned GET with the given filename', async () => {
    const k = key('download.txt');
    await storage.put(k, 'the contents', { contentType: 'text/plain' });
    const plain = await fetch(await storage.presignGet(k));
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe('the contents');
    expect(plain.headers.get('content-type')).toBe('text/plain');

    const named = await fetch(await storage.presignGet(k, { filename: 'Quarterly report é.txt' }));
    expect(named.status).toBe(200);
    expect(await named.text()).toBe('the contents');
    const disposition = named.headers.get('content-disposition') ?? '';
    expect(disposition).toContain('attachment');
    expect(disposition).toContain("filename*=UTF-8''Quarterly%20report%20%C3%A9.txt");
  });

  it('refuses a presigned PUT whose Content-Type differs from the signed one', async () => {
    const k = key('typed.csv');
    const url = await storage.presignPut(k, { contentType: 'text/csv' });
    const response = await fetch(url, { method: 'PUT', body: 'x', headers: { 'Content-Type': 'text/html' } });
    expect(response.status).toBe(403);
    expect(await storage.head(k)).toBeUndefined();
  });

  it('refuses an expired presigned URL', async () => {
    const k = key('expiring.txt');
    await storage.put(k, 'soon gone');
    const get = await storage.presignGet(k, { expiresInSeconds: 1 });
    const put = await storage.presignPut(key('late.txt'), { expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await fetch(get)).status).toBe(403);
    expect((await fetch(put, { method: 'PUT', body: 'late' })).status).toBe(403);
  });

  it('refuses a tampered presigned URL', async () => {
    const k = key('secret.txt');
    await storage.put(k, 'private');
    const url = new URL(await storage.presignGet(k));
    const signatureParam = name === 's3' ? 'X-Amz-Signature' : 'signature';
    const signature = url.searchParams.get(signatureParam)!;
    const flipped = new URL(url);
    flipped.searchParams.set(signatureParam, (signature[0] === '0' ? '1' : '0') + signature.slice(1));
    expect((await fetch(flipped)).status).toBe(403);

    // The same signature on another key.
    const other = key('other.txt');
    await storage.put(other, 'also private');
    const moved = new URL(url);
    moved.pathname = url.pathname.replace(/secret\.txt$/, 'other.txt');
    expect((await fetch(moved)).status).toBe(403);
  });

  it('refuses keys that could escape the store, in every operation', async () => {
    for (const bad of ['../escape.txt', 'a/../../escape.txt', '/etc/passwd', 'a//b', './a', 'a\\b', '', 'x.meta.json']) {
      await expect(storage.put(bad, 'x')).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(storage.head(bad)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(storage.get(bad)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(storage.delete(bad)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(storage.presignPut(bad)).rejects.toBeInstanceOf(InvalidKeyError);
    }
  });

  it('turns a failure of the store itself into StorageError', async () => {
    const broken = await driver.broken();
    await expect(broken.ensureReady()).rejects.toBeInstanceOf(StorageError);
    await expect(broken.put(key('a.txt'), 'x')).rejects.toBeInstanceOf(StorageError);
  });
});

describe('S3 driver against a closed port', () => {
  it('throws StorageError from every call instead of answering "missing"', async () => {
    const port = await freePort();
    const storage = createStorage(s3Config(`http://127.0.0.1:${port}`, 'closed'), { signingKey, publicBaseUrl: 'http://unused' });
    for (const call of [() => storage.head('a'), () => storage.get('a'), () => storage.delete('a'), () => storage.put('a', 'x')]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageError);
      expect((error as Error).cause).toBeDefined();
    }
  });
});

describe('local presigned URLs through the app', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('answers 403 with the error body for a missing or foreign signature', async () => {
    const k = `t/${unique()}.txt`;
    await ctx.deps.storage.put(k, 'x');
    for (const query of [
      '',
      '?method=GET',
      `?method=GET&expires=99999999999&signature=${'0'.repeat(64)}`,
      '?method=GET&expires=abc&signature=zz',
    ]) {
      const response = await ctx.request('GET', `/storage/objects/${encodeURIComponent(k)}${query}`);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: 'Invalid or expired signature' });
    }
  });

  it('refuses a GET URL used for a PUT, and a traversal key', async () => {
    const url = new URL(await ctx.deps.storage.presignGet(`t/${unique()}.txt`));
    const put = await fetch(url, { method: 'PUT', body: 'x' });
    expect(put.status).toBe(403);
    const sneaky = `${ctx.baseUrl}/storage/objects/${encodeURIComponent('../../keys/encryption.key')}${url.search}`;
    const response = await fetch(sneaky);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: 'Invalid or expired signature' });
  });

  it('answers 404 for a signed URL to a missing object', async () => {
    const url = new URL(await ctx.deps.storage.presignGet(`t/${unique()}.txt`));
    const missing = await ctx.request('GET', url.pathname + url.search);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Not Found' });
  });

  it('stores a JSON upload byte for byte although the body parser reads JSON', async () => {
    const k = `t/${unique()}.json`;
    const body = '{ "spaced" :  [1, 2] }\n';
    const url = new URL(await ctx.deps.storage.presignPut(k, { contentType: 'application/json' }));
    const response = await ctx.request('PUT', url.pathname + url.search, {
      rawBody: body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({});
    const object = await ctx.deps.storage.get(k);
    expect(await text(object!.body)).toBe(body);
  });

  it('streams a large binary upload and download intact', async () => {
    const k = `t/${unique()}.bin`;
    const payload = crypto.randomBytes(512 * 1024);
    const put = await fetch(await ctx.deps.storage.presignPut(k), { method: 'PUT', body: payload });
    expect(put.status).toBe(200);
    const head = await ctx.deps.storage.head(k);
    expect(head).toMatchObject({ size: payload.length, etag: crypto.createHash('md5').update(payload).digest('hex') });
    const get = await fetch(await ctx.deps.storage.presignGet(k));
    expect(get.headers.get('etag')).toBe(`"${head!.etag}"`);
    expect(Buffer.from(await get.arrayBuffer()).equals(payload)).toBe(true);
  });

  it('lists the routes in the OpenAPI document under CRM', async () => {
    const response = await ctx.request('GET', '/openapi.json');
    const operations = response.body.paths['/storage/objects/{key}'];
    expect(Object.keys(operations).sort()).toEqual(['get', 'put']);
    expect(operations.get.tags).toEqual(['CRM']);
  });
});
