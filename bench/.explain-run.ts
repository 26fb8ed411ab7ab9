import fs from 'node:fs';
import postgres from 'postgres';
import * as kb from '../db/knowledge-base';
import { HashingEmbedder } from '../platform/embedder-hashing';

const info = JSON.parse(fs.readFileSync('/tmp/kbdev/info.json', 'utf8'));
const notices: string[] = [];
const sql = postgres(info.databaseUrl, { max: 1, onnotice: (n) => notices.push(n.message) });
const text = process.argv[2] ?? 'w1 w2 w3 w1a';
const emb = new HashingEmbedder().vector(text);
const params = { text, embedding: emb, model: "builtin-hashing-384", candidates: 20, perTerm: 200, maxTerms: 16, commonRows: Number(process.env.COMMON ?? 5000) };
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  await sql.begin((tx) => kb.rankChunks(tx as never, info.orgId, info.ds, params));
  process.stdout.write(`run ${i}: ${(performance.now() - t).toFixed(1)} ms\n`);
}
await sql.begin(async (tx) => {
  await tx`LOAD 'auto_explain'`;
  await tx`SET LOCAL auto_explain.log_min_duration = 0`;
  await tx`SET LOCAL auto_explain.log_analyze = true`;
  await tx`SET LOCAL auto_explain.log_buffers = true`;
  await tx`SET LOCAL auto_explain.log_level = 'notice'`;
  await kb.rankChunks(tx as never, info.orgId, info.ds, params);
});
process.stdout.write(notices.filter((n) => n.includes('WITH terms')).join('\n').slice(0, 12000) + '\n');
await sql.end();
{
  const s = postgres(info.databaseUrl, { max: 1, onnotice: () => {} });
  const all = notices.find((n) => n.includes('WITH terms'))!;
  const query = all.slice(all.indexOf('WITH terms'), all.indexOf('Query Parameters:')).trim();
  const vec = `[${emb.join(',')}]`;
  const line = all.slice(all.indexOf('Query Parameters:'));
  const p: string[] = [];
  for (const m of line.matchAll(/\$(\d+) = '((?:[^']|'')*)'/g)) p[Number(m[1]) - 1] = m[2]!.replace(/''/g, "'");
  void vec;
  const rows = await s.begin(async (tx) => {
    await tx`SELECT set_config('hnsw.ef_search', '40', true)`;
    await tx`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)`;
    return tx.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${query}`, p as never[]);
  });
  fs.writeFileSync('/tmp/kbdev/plan2.txt', rows.map((r) => String(r['QUERY PLAN']).replace(/'\[[^\]]*\]'/g, "'[vec]'")).join('\n'));
  await s.end();
}
