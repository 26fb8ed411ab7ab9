import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uploadKey } from '../../services/files';
import { createTestContext, type TestContext } from '../support/context';
import { crmTenant, type CrmTenant } from '../support/crm-contacts';

// Uploads are bound to what initiate-upload declared, on both drivers (S3 on the run's real S3 server).

const MAX = 4096;

/** A raw PUT: the status the server answered, even when it stopped reading the body (0: no answer at all). */
function put(url: string, headers: Record<string, string | number>, body: Buffer | Buffer[]): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'PUT', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    for (const chunk of [body].flat()) req.write(chunk);
    req.end();
  });
}

describe.each([
  ['local', {}],
  ['s3', { s3: true }],
])('uploads with the %s driver', (driver, options) => {
  let ctx: TestContext;
  let t: CrmTenant;
  beforeAll(async () => {
    ctx = await createTestContext({ ...options, env: { UPLOAD_MAX_BYTES: String(MAX) } });
    t = await crmTenant(ctx);
  });
  afterAll(() => ctx?.close());

  const initiate = async (body: Record<string, unknown>) => {
    const res = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'a.txt', content_type: 'text/plain', ...body },
    });
    expect(res.status, res.text).toBe(200);
    return res.body as Record<string, any>;
  };
  const confirm = (id: string) => ctx.request('POST', `/files/${id}/confirm-upload`, { token: t.session });
  const status = async (id: string) => (await ctx.request('GET', `/files/${id}`, { token: t.session })).body.status;
  const keyOf = async (id: string) =>
    (await ctx.deps.sql<{ storage_key: string }[]>`SELECT storage_key FROM files WHERE id = ${id}`)[0]!.storage_key;
  const refusedStatus = driver === 'local' ? 413 : 403; // S3 refuses a length other than the signed one as a bad signature

  const oversized = 50 * 1024 ** 2;

  it('refuses 50 MiB through a URL issued for 10 bytes, and stores nothing', async () => {
    const file = await initiate({ size_bytes: 10 });
    const code = await put(file.upload_url, { ...file.upload_headers, 'Content-Length': oversized }, Buffer.alloc(oversized, 1));
    expect([refusedStatus, 0]).toContain(code);
    expect(await ctx.deps.storage.head(await keyOf(file.id))).toBeUndefined();
    expect((await confirm(file.id)).status).toBe(409);
    expect(await status(file.id)).toBe('pending_upload');
  });

  it('refuses a body shorter than the declared size', async () => {
    const file = await initiate({ size_bytes: 10 });
    const code = await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 9 }, Buffer.from('123456789'));
    expect(code).toBe(driver === 'local' ? 400 : 403);
    expect(await ctx.deps.storage.head(await keyOf(file.id))).toBeUndefined();
  });

  it('accepts exactly the declared size, and confirm records it', async () => {
    const file = await initiate({ size_bytes: 10 });
    expect(await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 10 }, Buffer.from('0123456789'))).toBe(200);
    const res = await confirm(file.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'uploaded', size_bytes: 10 });
  });

  it('refuses a declared size above UPLOAD_MAX_BYTES with 422, as the bound the document states, creating nothing', async () => {
    const before = (await ctx.deps.sql`SELECT count(*)::int AS n FROM files`)[0]!.n;
    const res = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'big', content_type: 'text/plain', size_bytes: MAX + 1 },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ type: 'less_than_equal', loc: ['body', 'size_bytes'], ctx: { le: MAX } })]);
    expect((await ctx.deps.sql`SELECT count(*)::int AS n FROM files`)[0]!.n).toBe(before);
  });

  it('without a declared size, holds the upload to the maximum file size', async () => {
    const file = await initiate({});
    const big = Buffer.alloc(MAX + 1, 2);
    const code = await put(file.upload_url, { ...file.upload_headers, 'Content-Length': big.length }, big);
    if (driver === 'local') {
      expect(code).toBe(413);
      // Without Content-Length too: refused while streaming.
      const chunked = await put(file.upload_url, { ...file.upload_headers, 'Transfer-Encoding': 'chunked' }, [
        Buffer.alloc(MAX, 3),
        Buffer.alloc(MAX, 3),
      ]);
      expect(chunked).toBe(413);
      expect(await ctx.deps.storage.head(await keyOf(file.id))).toBeUndefined();
    } else {
      // A presigned S3 PUT has no range: confirm refuses the oversized object and removes it.
      expect(code).toBe(200);
      const res = await confirm(file.id);
      expect(res.status).toBe(409);
      expect(res.body.detail).toBe(
        `The uploaded object does not match the upload: ${MAX + 1} bytes were uploaded, the maximum file size is ${MAX} bytes. It was removed; upload the file again`,
      );
      expect(await ctx.deps.storage.head(await keyOf(file.id))).toBeUndefined();
    }
    expect(await status(file.id)).toBe('pending_upload');
    // The same URL can upload a right-sized file afterwards.
    expect(await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 5 }, Buffer.from('small'))).toBe(200);
    expect((await confirm(file.id)).body).toMatchObject({ status: 'uploaded', size_bytes: 5 });
  });

  it('confirm compares the stored size and content type with the declaration and refuses a mismatch', async () => {
    const sized = await initiate({ size_bytes: 3 });
    await ctx.deps.storage.put(await keyOf(sized.id), 'four', { contentType: 'text/plain' });
    const wrongSize = await confirm(sized.id);
    expect(wrongSize).toMatchObject({
      status: 409,
      body: {
        detail:
          'The uploaded object does not match the upload: 4 bytes were uploaded, 3 were declared. It was removed; upload the file again',
      },
    });
    expect(await status(sized.id)).toBe('pending_upload');

    // An object staged by a URL of the earlier scheme (beside the file's key) is held to the same rules.
    const typed = await initiate({ size_bytes: 3 });
    await ctx.deps.storage.put(uploadKey(await keyOf(typed.id)), 'abc', { contentType: 'application/x-msdownload' });
    const wrongType = await confirm(typed.id);
    expect(wrongType.status).toBe(409);
    expect(wrongType.body.detail).toContain('it was uploaded as application/x-msdownload, text/plain was declared');
    expect(await status(typed.id)).toBe('pending_upload');
    expect(await ctx.deps.storage.head(uploadKey(await keyOf(typed.id)))).toBeUndefined();
  });

  it('an upload URL is single-use: refused once its object exists and after confirm, writing nothing, leaving no other object', async () => {
    const file = await initiate({ size_bytes: 8 });
    const key = await keyOf(file.id);
    expect(file.upload_headers).toEqual({ 'Content-Type': 'text/plain', 'If-None-Match': '*' });
    // The URL is signed for If-None-Match: *, so a PUT without it is refused (S3: a bad signature).
    expect(await put(file.upload_url, { 'Content-Type': 'text/plain', 'Content-Length': 8 }, Buffer.from('nomatch!'))).toBe(403);
    expect(await ctx.deps.storage.head(key)).toBeUndefined();
    expect(await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 8 }, Buffer.from('original'))).toBe(200);
    // Local: our route's 409; S3 answers 412 Precondition Failed itself.
    const refused = driver === 'local' ? 409 : 412;
    expect(await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 8 }, Buffer.from('racing!!'))).toBe(refused);
    const confirmed = await confirm(file.id);
    expect(confirmed.status).toBe(200);
    expect(await put(file.upload_url, { ...file.upload_headers, 'Content-Length': 8 }, Buffer.from('replaced'))).toBe(refused);
    const again = await confirm(file.id);
    expect(again.body).toEqual(confirmed.body);
    const { url } = (await ctx.request('GET', `/files/${file.id}/download-url`, { token: t.session })).body;
    expect(await (await fetch(url)).text()).toBe('original');
    // The file's object is the only one under its key: no staging copy, nothing left behind.
    expect(await keysUnder(key)).toEqual([key]);
  });

  /** Every object key starting with `prefix`, as the store lists them (sidecar files of the local driver aside). */
  async function keysUnder(prefix: string): Promise<string[]> {
    if (driver === 'local') {
      const root = path.join(ctx.config.dataDir, 'objects');
      const dir = path.dirname(path.join(root, prefix));
      return fs
        .readdirSync(dir)
        .map((name) => path.relative(root, path.join(dir, name)))
        .filter((k) => k.startsWith(prefix) && !k.endsWith('.meta.json'));
    }
    const s3 = inject('s3');
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const out = await client.send(new ListObjectsV2Command({ Bucket: ctx.config.S3_BUCKET, Prefix: prefix }));
    client.destroy();
    return (out.Contents ?? []).map((o) => o.Key!);
  }
});
