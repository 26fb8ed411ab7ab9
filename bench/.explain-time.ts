import fs from 'node:fs';
import postgres from 'postgres';
import * as kb from '../db/knowledge-base';
import { HashingEmbedder } from '../platform/embedder-hashing';
const info = JSON.parse(fs.readFileSync('/tmp/kbdev/info.json', 'utf8'));
const sql = postgres(info.databaseUrl, { max: 1 });
const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
const times: number[] = [];
for (let i = 0; i < 60; i++) {
  const text = `${words[i * 7]} ${words[i * 13 % 3000]} ${words[(i * 31) % 300]} ref-${i}-${i % 100}`;
  const t = performance.now();
  await sql.begin((tx) => kb.rankChunks(tx as never, info.orgId, info.ds, { text, embedding: new HashingEmbedder().vector(text), model: 'builtin-hashing-384', candidates: 20, perTerm: 200, maxTerms: 16, commonRows: Number(process.env.COMMON ?? 5000) }));
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log('p50', times[30]!.toFixed(1), 'p95', times[57]!.toFixed(1));
await sql.end();
