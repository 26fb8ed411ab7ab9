import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirError, blockedAncestors, canTraverse, startEmbeddedPostgres } from '../../dev-servers/embedded-postgres';
import { freePort } from '../../dev-servers/ports';

// The embedded Postgres starts in any folder the invoking user can write, even one that the
// `postgres` system user (the server's user when running as root) cannot traverse, such as a
// `mktemp -d` folder (0700); it has the vector extension with a working HNSW index; a start that
// cannot work says so in one line naming DATA_DIR.

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-datadir-'));
  scratch.push(dir);
  return dir;
}

describe('embedded Postgres data folder', () => {
  it('starts under a private mktemp -d folder, with pgvector and an HNSW index', async () => {
    const root = tempDir();
    const nested = path.join(root, 'private');
    fs.mkdirSync(nested, { mode: 0o700 });
    expect(fs.statSync(root).mode & 0o777).toBe(0o700);
    const pg = await startEmbeddedPostgres({ dataDir: path.join(nested, 'postgres'), port: await freePort() });
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      await sql`CREATE EXTENSION IF NOT EXISTS vector`;
      const [ext] = await sql<{ extversion: string }[]>`SELECT extversion FROM pg_extension WHERE extname = 'vector'`;
      expect(ext!.extversion).toBe('0.8.2');
      await sql`CREATE TABLE v (id int PRIMARY KEY, e vector(3))`;
      await sql`INSERT INTO v SELECT i, ARRAY[cos(i), sin(i), 0.5]::real[]::vector FROM generate_series(1, 500) i`;
      await sql`CREATE INDEX ON v USING hnsw (e vector_cosine_ops)`;
      await sql.begin(async (tx) => {
        await tx`SET LOCAL enable_seqscan = off`;
        const plan = await tx.unsafe(`EXPLAIN SELECT id FROM v ORDER BY e <=> '[1,0,0.5]' LIMIT 3`);
        expect(JSON.stringify(plan)).toContain('v_e_idx');
        const rows = await tx<{ id: number }[]>`SELECT id FROM v ORDER BY e <=> '[1,0,0.5]' LIMIT 1`;
        expect(rows).toHaveLength(1);
      });
    } finally {
      await sql.end();
      await pg.stop();
    }
    // Folders above were made traversable (search bit only), not readable by others.
    if (process.getuid?.() === 0) expect(fs.statSync(root).mode & 0o007).toBe(0o001);
  });

  it('refuses a data folder of another Postgres major version in one line naming DATA_DIR', async () => {
    const dataDir = path.join(tempDir(), 'postgres');
    fs.mkdirSync(dataDir);
    fs.writeFileSync(path.join(dataDir, 'PG_VERSION'), '17\n');
    const start = startEmbeddedPostgres({ dataDir, port: await freePort() });
    await expect(start).rejects.toThrow(DataDirError);
    await expect(start).rejects.toThrow(/^DATA_DIR: .* holds a Postgres 17 cluster .*move that folder aside/);
  });

  it('refuses a folder it cannot create in one line naming DATA_DIR', async () => {
    const file = path.join(tempDir(), 'a-file');
    fs.writeFileSync(file, '');
    const start = startEmbeddedPostgres({ dataDir: path.join(file, 'postgres'), port: await freePort() });
    await expect(start).rejects.toThrow(/^DATA_DIR: cannot create .*set DATA_DIR to a directory this user can write$/);
  });

  it('computes which folders a user cannot traverse from their mode bits', () => {
    const user = { uid: 101, gids: [104] };
    expect(canTraverse({ uid: 0, gid: 0, mode: 0o40700 }, user)).toBe(false);
    expect(canTraverse({ uid: 0, gid: 0, mode: 0o40701 }, user)).toBe(true);
    expect(canTraverse({ uid: 0, gid: 104, mode: 0o40710 }, user)).toBe(true);
    expect(canTraverse({ uid: 101, gid: 0, mode: 0o40700 }, user)).toBe(true);
    const modes: Record<string, number> = { '/': 0o40755, '/home': 0o40755, '/home/me': 0o40700, '/home/me/data': 0o40700 };
    const stat = (p: string) => ({ uid: 1000, gid: 1000, mode: modes[p]! });
    expect(blockedAncestors('/home/me/data/postgres', user, stat)).toEqual(['/home/me', '/home/me/data']);
  });
});
