import fs from 'node:fs';
import { createSql } from '../db/client';
import * as kb from '../db/knowledge-base';
import { HashingEmbedder } from '../platform/embedder-hashing';
import { newId } from '../platform/ids';
import { startBenchDatabase } from './environment';

const dir = '/tmp/kbdev/run';
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir, { recursive: true });
fs.chmodSync(dir, 0o755);
const { pg, databaseUrl } = await startBenchDatabase(dir);
const sql = createSql(databaseUrl, 4);
const orgId = newId();
await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, 'dev')`;
const ds = newId();
await sql`INSERT INTO kb_datasets (id, org_id, name, chunking_method, chunk_size, embedding_model, created_by, modified_by) VALUES (${ds}, ${orgId}, 'd', 'structure', 1000, 'builtin-hashing-384', 'u', 'u')`;
const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const emb = new HashingEmbedder();
const target = Number(process.env.N ?? 20000);
for (let s = 0; s * 100 < target; s++) {
  const sourceId = newId();
  const rows: kb.NewChunk[] = [];
  for (let o = 0; o < 100; o++) {
    const text = Array.from({ length: 60 }, () => words[Math.floor(rand() ** 2 * words.length)]).join(' ') + ` ref-${s}-${o}`;
    rows.push({ source_id: sourceId, generation: 1, ordinal: o, content: text, embedding: emb.vector(text) });
  }
  await sql.begin(async (tx) => {
    await kb.insertSources(tx, orgId, [{ id: sourceId, type: 'FILE', name: `f${s}`, description: '', url: null, domain: null, file_id: null, file_size: null, chunking_method: null, chunk_size: null, created_by: 'u' }]);
    await kb.insertChunkRows(tx, orgId, rows, 'builtin-hashing-384');
    await kb.publishGenerations(tx, orgId, [sourceId], 1, 'builtin-hashing-384');
    await kb.attachSources(tx, orgId, ds, [sourceId]);
  });
}
await sql`VACUUM ANALYZE kb_chunks`;
fs.writeFileSync('/tmp/kbdev/info.json', JSON.stringify({ databaseUrl, orgId, ds, pid: process.pid }));
process.stdout.write(`ready ${databaseUrl} ${orgId} ${ds}\n`);
await new Promise(() => {});
void pg;
