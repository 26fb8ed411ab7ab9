import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { MISSING_ID, crmTenant, readOnlyKey, type CrmTenant } from '../support/crm-contacts';

const FILE_KEYS = [
  'archived_at',
  'content_type',
  'created_at',
  'created_by',
  'folder_id',
  'id',
  'name',
  'size_bytes',
  'status',
  'updated_at',
  'uploaded_at',
];

/**
 * A TCP relay to the run's S3 server. The app starts through it (its bucket check passes), then the
 * relay closes and its port refuses connections: a real store failure, no mock involved.
 */
async function s3Relay(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const target = new URL(inject('s3').endpoint);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

async function initiate(ctx: TestContext, t: CrmTenant, body: Record<string, unknown> = {}) {
  const res = await ctx.request('POST', '/files/initiate-upload', {
    token: t.session,
    body: { name: 'report.txt', content_type: 'text/plain', ...body },
  });
  if (res.status !== 200) throw new Error(`initiate-upload failed: ${res.status} ${res.text}`);
  return res.body as Record<string, any>;
}

async function upload(file: Record<string, any>, content: string) {
  const res = await fetch(file.upload_url, { method: file.upload_method, headers: file.upload_headers, body: content });
  expect(res.status).toBeLessThan(300);
}

const confirm = (ctx: TestContext, t: CrmTenant, id: string) => ctx.request('POST', `/files/${id}/confirm-upload`, { token: t.session });

/** A file that went all the way to uploaded. */
async function uploadedFile(ctx: TestContext, t: CrmTenant, body: Record<string, unknown> = {}, content = 'hello') {
  const file = await initiate(ctx, t, body);
  await upload(file, content);
  const res = await confirm(ctx, t, file.id);
  expect(res.status).toBe(200);
  return res.body as Record<string, any>;
}

describe.each([
  ['local', {}],
  ['s3', { s3: true }],
])('upload and confirm with the %s driver', (_driver, options) => {
  let ctx: TestContext;
  let t: CrmTenant;
  beforeAll(async () => {
    ctx = await createTestContext(options);
    t = await crmTenant(ctx);
  });
  afterAll(() => ctx?.close());

  it('initiate-upload answers 200 with the pending file and a presigned PUT URL with its expiry', async () => {
    const before = Date.now();
    const res = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'Q3 report.csv', content_type: 'text/csv', size_bytes: 999 },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [...FILE_KEYS, 'upload_expires_at', 'upload_headers', 'upload_method', 'upload_url'].sort(),
    );
    expect(res.body).toMatchObject({
      name: 'Q3 report.csv',
      content_type: 'text/csv',
      size_bytes: 999,
      status: 'pending_upload',
      folder_id: null,
      uploaded_at: null,
      archived_at: null,
      created_by: `user:${t.user}`,
      upload_method: 'PUT',
      upload_headers: { 'Content-Type': 'text/csv' },
    });
    const expires = new Date(res.body.upload_expires_at).getTime();
    expect(expires).toBeGreaterThan(before + 800_000);
    expect(expires).toBeLessThan(before + 1_000_000);
  });

  it('rule 2: confirm before the object is there is 409 (retry shortly), and the file stays pending', async () => {
    const file = await initiate(ctx, t);
    const res = await confirm(ctx, t, file.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: 'The uploaded object is not in object storage yet; retry shortly' });
    expect((await ctx.request('GET', `/files/${file.id}`, { token: t.session })).body.status).toBe('pending_upload');
  });

  it('rule 1: after a PUT through the URL, confirm checks the store and marks the file uploaded with its real size', async () => {
    const file = await initiate(ctx, t, { size_bytes: 11 });
    await upload(file, 'hello world');
    const res = await confirm(ctx, t, file.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(FILE_KEYS);
    expect(res.body).toMatchObject({ id: file.id, status: 'uploaded', size_bytes: 11, uploaded_at: expect.any(String) });
  });

  it('rule 3: a repeated confirm is 200 with the same uploaded row', async () => {
    const first = await uploadedFile(ctx, t);
    const again = await confirm(ctx, t, first.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
  });

  it('rule 3: each repeat re-verifies the object: once it is gone, confirm is 409 again', async () => {
    const file = await uploadedFile(ctx, t);
    const { storage_key } = (await ctx.deps.sql<{ storage_key: string }[]>`SELECT storage_key FROM files WHERE id = ${file.id}`)[0]!;
    await ctx.deps.storage.delete(storage_key);
    expect((await confirm(ctx, t, file.id)).status).toBe(409);
  });

  it('download-url gives a URL that serves the bytes under the file name', async () => {
    const file = await uploadedFile(ctx, t, { name: 'notes.txt' }, 'the contents');
    const res = await ctx.request('GET', `/files/${file.id}/download-url`, { token: t.session });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'url']);
    const download = await fetch(res.body.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('the contents');
    expect(download.headers.get('content-disposition')).toContain('notes.txt');
  });
});

describe('confirm-upload when the object storage check itself fails', () => {
  let ctx: TestContext;
  let relay: Awaited<ReturnType<typeof s3Relay>>;
  beforeAll(async () => {
    relay = await s3Relay();
    ctx = await createTestContext({ s3: true, env: { S3_ENDPOINT: relay.endpoint } });
  });
  afterAll(async () => {
    await ctx?.close();
    await relay?.close();
  });

  it('rule 2: is 502, and the file stays pending', async () => {
    const t = await crmTenant(ctx);
    const file = await initiate(ctx, t);
    await relay.close();
    const res = await confirm(ctx, t, file.id);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ detail: 'Object storage unavailable' });
    expect((await ctx.request('GET', `/files/${file.id}`, { token: t.session })).body.status).toBe('pending_upload');
  });
});

describe('files and folders (local driver)', () => {
  let ctx: TestContext;
  let a: CrmTenant;
  let b: CrmTenant;
  beforeAll(async () => {
    ctx = await createTestContext();
    [a, b] = await Promise.all([crmTenant(ctx), crmTenant(ctx)]);
  });
  afterAll(() => ctx?.close());

  const folder = async (t: CrmTenant, name: string, parent_id?: string) => {
    const res = await ctx.request('POST', '/folders', { token: t.session, body: { name, ...(parent_id ? { parent_id } : {}) } });
    expect(res.status, res.text).toBe(200);
    return res.body as Record<string, any>;
  };
  const storageKeyOf = async (id: string) => (await ctx.deps.sql`SELECT storage_key FROM files WHERE id = ${id}`)[0]!.storage_key as string;

  describe('initiate-upload', () => {
    it('puts the file in a folder of the organization', async () => {
      const f = await folder(a, 'Contracts');
      expect((await initiate(ctx, a, { folder_id: f.id })).folder_id).toBe(f.id);
    });

    it("is 404 for another organization's folder, writing nothing", async () => {
      const theirs = await folder(b, 'Theirs');
      const res = await ctx.request('POST', '/files/initiate-upload', {
        token: a.session,
        body: { name: 'x.txt', content_type: 'text/plain', folder_id: theirs.id },
      });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Folder not found' });
      const { n } = (await ctx.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM files WHERE folder_id = ${theirs.id}`)[0]!;
      expect(n).toBe(0);
    });

    it('validates the body (422)', async () => {
      for (const body of [
        { name: 'x' },
        { content_type: 'text/plain' },
        { name: '', content_type: 'text/plain' },
        { name: 'x', content_type: 'nonsense' },
        { name: 'x', content_type: 'text/plain', size_bytes: -1 },
      ]) {
        expect((await ctx.request('POST', '/files/initiate-upload', { token: a.session, body })).status, JSON.stringify(body)).toBe(422);
      }
    });
  });

  describe('confirm-upload', () => {
    it("rule 2: is 404 for an unknown file, another organization's, and an archived one", async () => {
      const theirs = await initiate(ctx, b);
      await upload(theirs, 'theirs');
      const archived = await initiate(ctx, a);
      await upload(archived, 'archived');
      await ctx.request('POST', `/files/${archived.id}/archive`, { token: a.session });
      for (const id of [MISSING_ID, theirs.id, archived.id]) {
        const res = await confirm(ctx, a, id);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ detail: 'File not found' });
      }
      expect((await ctx.request('GET', `/files/${theirs.id}`, { token: b.session })).body.status).toBe('pending_upload');
    });
  });

  describe('GET /files/{file_id}', () => {
    it("reads the organization's file; another organization's is 404", async () => {
      const file = await initiate(ctx, a);
      const res = await ctx.request('GET', `/files/${file.id}`, { token: a.session });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(FILE_KEYS);
      expect((await ctx.request('GET', `/files/${file.id}`, { token: b.session })).status).toBe(404);
    });
  });

  describe('download-url', () => {
    it('is 409 for a pending or archived file', async () => {
      const pending = await initiate(ctx, a);
      const res = await ctx.request('GET', `/files/${pending.id}/download-url`, { token: a.session });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ detail: 'The file is pending upload; only uploaded files can be downloaded' });
      const archived = await uploadedFile(ctx, a);
      await ctx.request('POST', `/files/${archived.id}/archive`, { token: a.session });
      expect((await ctx.request('GET', `/files/${archived.id}/download-url`, { token: a.session })).status).toBe(409);
    });

    it("is 404 for another organization's file", async () => {
      const theirs = await uploadedFile(ctx, b);
      expect((await ctx.request('GET', `/files/${theirs.id}/download-url`, { token: a.session })).status).toBe(404);
    });
  });

  describe('archive', () => {
    it('archives (idempotently) and keeps the object', async () => {
      const file = await uploadedFile(ctx, a);
      const res = await ctx.request('POST', `/files/${file.id}/archive`, { token: a.session });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: file.id, status: 'archived', archived_at: expect.any(String), uploaded_at: file.uploaded_at });
      const again = await ctx.request('POST', `/files/${file.id}/archive`, { token: a.session });
      expect(again.body).toEqual(res.body);
      expect(await ctx.deps.storage.head(await storageKeyOf(file.id))).toBeDefined();
    });

    it("is 404 for another organization's file, which stays as it was", async () => {
      const theirs = await uploadedFile(ctx, b);
      expect((await ctx.request('POST', `/files/${theirs.id}/archive`, { token: a.session })).status).toBe(404);
      expect((await ctx.request('GET', `/files/${theirs.id}`, { token: b.session })).body.status).toBe('uploaded');
    });
  });

  describe('GET /files/list', () => {
    let t: CrmTenant;
    const ids: Record<string, string> = {};
    let docs: Record<string, any>;
    beforeAll(async () => {
      t = await crmTenant(ctx);
      docs = await folder(t, 'Docs');
      ids.pending = (await initiate(ctx, t, { name: 'pending.txt' })).id;
      ids.uploaded = (await uploadedFile(ctx, t, { name: 'uploaded.txt', folder_id: docs.id })).id;
      ids.archived = (await uploadedFile(ctx, t, { name: 'archived.txt' })).id;
      await ctx.request('POST', `/files/${ids.archived}/archive`, { token: t.session });
      ids.latest = (await initiate(ctx, t, { name: 'latest.txt', folder_id: docs.id })).id;
    });
    const list = (query = '') => ctx.request('GET', `/files/list${query}`, { token: t.session });
    const names = (body: { files: { name: string }[] }) => body.files.map((f) => f.name);

    it('returns {files, limit, offset}, newest first, without archived files', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['files', 'limit', 'offset']);
      expect(res.body).toMatchObject({ limit: 50, offset: 0 });
      expect(names(res.body)).toEqual(['latest.txt', 'uploaded.txt', 'pending.txt']);
    });

    it('lists archived files only when status=archived asks for them', async () => {
      expect(names((await list('?status=archived')).body)).toEqual(['archived.txt']);
      expect(names((await list('?status=uploaded')).body)).toEqual(['uploaded.txt']);
      expect(names((await list('?status=pending_upload')).body)).toEqual(['latest.txt', 'pending.txt']);
    });

    it('filters by folder_id and pages with limit and offset (limit capped at 200)', async () => {
      expect(names((await list(`?folder_id=${docs.id}`)).body)).toEqual(['latest.txt', 'uploaded.txt']);
      const page = await list('?limit=1&offset=1');
      expect(page.body).toMatchObject({ limit: 1, offset: 1 });
      expect(names(page.body)).toEqual(['uploaded.txt']);
      expect((await list('?limit=999')).body.limit).toBe(200);
    });

    it('answers 400 for an unknown filter or an invalid status', async () => {
      expect((await list('?owner=me')).status).toBe(400);
      const bad = await list('?status=deleted');
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^Invalid status 'deleted'/);
    });

    it("never shows another organization's files", async () => {
      const res = await ctx.request('GET', '/files/list?status=uploaded', { token: b.session });
      expect(res.body.files.map((f: { id: string }) => f.id)).not.toContain(ids.uploaded);
    });
  });

  describe('folders', () => {
    it('creates folders at the top level and inside another', async () => {
      const top = await folder(a, 'Top');
      expect(top).toEqual({
        id: expect.any(String),
        parent_id: null,
        name: 'Top',
        created_by: `user:${a.user}`,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const child = await folder(a, 'Child', top.id);
      expect(child.parent_id).toBe(top.id);
    });

    it('refuses a sibling with the same name (409), allows it elsewhere', async () => {
      const parent = await folder(a, 'Siblings');
      await folder(a, 'Same', parent.id);
      const again = await ctx.request('POST', '/folders', { token: a.session, body: { name: 'Same', parent_id: parent.id } });
      expect(again.status).toBe(409);
      await folder(a, 'Same');
      await folder(b, 'Siblings');
    });

    it("is 404 for another organization's parent", async () => {
      const theirs = await folder(b, 'Their parent');
      const res = await ctx.request('POST', '/folders', { token: a.session, body: { name: 'Mine', parent_id: theirs.id } });
      expect(res.status).toBe(404);
    });

    it('validates the name (422)', async () => {
      for (const name of ['', 'a/b', 'x'.repeat(256)]) {
        expect((await ctx.request('POST', '/folders', { token: a.session, body: { name } })).status).toBe(422);
      }
    });

    it('lists folders by name, all of them or the children of parent_id, as {folders, limit, offset}', async () => {
      const t = await crmTenant(ctx);
      const beta = await folder(t, 'beta');
      await folder(t, 'alpha');
      await folder(t, 'gamma', beta.id);
      const all = await ctx.request('GET', '/folders', { token: t.session });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ limit: 200, offset: 0 });
      expect(all.body.folders.map((f: { name: string }) => f.name)).toEqual(['alpha', 'beta', 'gamma']);
      const children = await ctx.request('GET', `/folders?parent_id=${beta.id}`, { token: t.session });
      expect(children.body.folders.map((f: { name: string }) => f.name)).toEqual(['gamma']);
      expect((await ctx.request('GET', '/folders?colour=red', { token: t.session })).status).toBe(400);
      expect((await ctx.request('GET', `/folders?parent_id=${beta.id}`, { token: b.session })).body.folders).toEqual([]);
    });

    it('renames and moves a folder; parent_id null moves it to the top level', async () => {
      const one = await folder(a, 'One');
      const two = await folder(a, 'Two');
      const moved = await ctx.request('PATCH', `/folders/${two.id}`, {
        token: a.session,
        body: { parent_id: one.id, name: 'Two renamed' },
      });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ id: two.id, parent_id: one.id, name: 'Two renamed' });
      const back = await ctx.request('PATCH', `/folders/${two.id}`, { token: a.session, body: { parent_id: null } });
      expect(back.body).toMatchObject({ parent_id: null, name: 'Two renamed' });
    });

    it('refuses a move into itself or its own subtree (409)', async () => {
      const root = await folder(a, 'Root');
      const mid = await folder(a, 'Mid', root.id);
      const leaf = await folder(a, 'Leaf', mid.id);
      for (const parent of [root.id, leaf.id]) {
        const res = await ctx.request('PATCH', `/folders/${root.id}`, { token: a.session, body: { parent_id: parent } });
        expect(res.status).toBe(409);
        expect(res.body).toEqual({ detail: 'A folder cannot be moved into itself or one of its subfolders' });
      }
      // Moving a leaf up is fine.
      expect((await ctx.request('PATCH', `/folders/${leaf.id}`, { token: a.session, body: { parent_id: root.id } })).status).toBe(200);
    });

    it('answers 409 for a rename onto a sibling, 400 for an empty body, 404 for a foreign parent', async () => {
      const x = await folder(a, 'Clash X');
      await folder(a, 'Clash Y');
      expect((await ctx.request('PATCH', `/folders/${x.id}`, { token: a.session, body: { name: 'Clash Y' } })).status).toBe(409);
      expect((await ctx.request('PATCH', `/folders/${x.id}`, { token: a.session, body: {} })).status).toBe(400);
      const theirs = await folder(b, 'Foreign parent');
      const res = await ctx.request('PATCH', `/folders/${x.id}`, { token: a.session, body: { parent_id: theirs.id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Parent folder not found' });
    });

    it("PATCH is 404 for another organization's folder", async () => {
      const theirs = await folder(b, 'Their folder');
      const res = await ctx.request('PATCH', `/folders/${theirs.id}`, { token: a.session, body: { name: 'Mine now' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Folder not found' });
    });

    it('deletes an empty folder (204)', async () => {
      const empty = await folder(a, 'Empty');
      expect((await ctx.request('DELETE', `/folders/${empty.id}`, { token: a.session })).status).toBe(204);
      expect((await ctx.request('DELETE', `/folders/${empty.id}`, { token: a.session })).status).toBe(404);
    });

    it('refuses a non-empty folder without cascade=true (409), whether it holds a folder or a file', async () => {
      const withFolder = await folder(a, 'Has folder');
      await folder(a, 'Inner', withFolder.id);
      const withFile = await folder(a, 'Has file');
      await initiate(ctx, a, { folder_id: withFile.id });
      for (const f of [withFolder, withFile]) {
        for (const query of ['', '?cascade=false']) {
          const res = await ctx.request('DELETE', `/folders/${f.id}${query}`, { token: a.session });
          expect(res.status).toBe(409);
          expect(res.body).toEqual({ detail: 'The folder is not empty; delete it with cascade=true' });
        }
      }
      expect((await ctx.request('DELETE', `/folders/${withFile.id}?cascade=yes`, { token: a.session })).status).toBe(400);
    });

    it('with cascade=true deletes the subtree, its files, and their objects in storage', async () => {
      const top = await folder(a, 'Cascade top');
      const sub = await folder(a, 'Cascade sub', top.id);
      const inTop = await uploadedFile(ctx, a, { folder_id: top.id });
      const inSub = await uploadedFile(ctx, a, { folder_id: sub.id });
      const outside = await uploadedFile(ctx, a);
      const keys = await Promise.all([inTop.id, inSub.id, outside.id].map(storageKeyOf));

      const res = await ctx.request('DELETE', `/folders/${top.id}?cascade=true`, { token: a.session });
      expect(res.status).toBe(204);
      for (const id of [inTop.id, inSub.id]) expect((await ctx.request('GET', `/files/${id}`, { token: a.session })).status).toBe(404);
      expect((await ctx.request('GET', `/folders?parent_id=${top.id}`, { token: a.session })).body.folders).toEqual([]);
      expect(await ctx.deps.storage.head(keys[0]!)).toBeUndefined();
      expect(await ctx.deps.storage.head(keys[1]!)).toBeUndefined();
      expect(await ctx.deps.storage.head(keys[2]!)).toBeDefined();
      expect((await ctx.request('GET', `/files/${outside.id}`, { token: a.session })).status).toBe(200);
    });

    it("DELETE is 404 for another organization's folder, which stays", async () => {
      const theirs = await folder(b, 'Keep me');
      expect((await ctx.request('DELETE', `/folders/${theirs.id}?cascade=true`, { token: a.session })).status).toBe(404);
      const list = await ctx.request('GET', '/folders', { token: b.session });
      expect(list.body.folders.map((f: { id: string }) => f.id)).toContain(theirs.id);
    });
  });

  describe('scopes', () => {
    let key: string;
    let fileId: string;
    let folderId: string;
    beforeAll(async () => {
      key = await readOnlyKey(ctx, a);
      fileId = (await uploadedFile(ctx, a)).id;
      folderId = (await folder(a, 'Scoped')).id;
    });

    it.each([
      ['GET', '/files/list'],
      ['GET', '/files/{file}'],
      ['GET', '/files/{file}/download-url'],
      ['GET', '/folders'],
    ])('a CRM read key may %s %s', async (method, path) => {
      expect((await ctx.request(method, path.replace('{file}', fileId), { token: key })).status).toBe(200);
    });

    it.each([
      ['POST', '/files/initiate-upload', { name: 'x.txt', content_type: 'text/plain' }],
      ['POST', '/files/{file}/confirm-upload', undefined],
      ['POST', '/files/{file}/archive', undefined],
      ['POST', '/folders', { name: 'nope' }],
      ['PATCH', '/folders/{folder}', { name: 'nope' }],
      ['DELETE', '/folders/{folder}', undefined],
    ])('a CRM read key gets 403 on %s %s', async (method, path, body) => {
      const res = await ctx.request(method, path.replace('{file}', fileId).replace('{folder}', folderId), { token: key, body });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: 'Insufficient permissions' });
    });

    it('nothing changed through the read-only key', async () => {
      expect((await ctx.request('GET', `/files/${fileId}`, { token: a.session })).body.status).toBe('uploaded');
      const folders = (await ctx.request('GET', '/folders', { token: a.session })).body.folders;
      expect(folders.find((f: { id: string }) => f.id === folderId)?.name).toBe('Scoped');
    });
  });
});
