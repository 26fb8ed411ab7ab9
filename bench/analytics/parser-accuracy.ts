import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeReaderPools, setDerivedReaderPassword } from '../../db/analytics-assistant';
import { createSql } from '../../db/client';
import { loadConfig } from '../../platform/config';
import { createEmbedder } from '../../platform/embedder';
import { newId } from '../../platform/ids';
import { attemptQuery } from '../../services/analytics-assistant/query-runner';
import { understandQuestion } from '../../services/analytics-assistant/understanding';
import { declareTable, writeRows } from '../../services/custom-data';
import { startBenchDatabase } from '../environment';
import { HELD_OUT } from './held-out';
import { GOLDEN_SET, ORDERS, ORDERS_DECLARATION, goldenOrders, sameResult, seedGoldenCrm } from './golden-set';

// `npm run bench -- analytics-parser [--verbose] [--held-out]`: the Analytics Assistant on the defaults (the semantic layer
// and the question parser, no large model) over the golden set: every question in its three phrasings,
// judged by execution (rows as a multiset, column order ignored); clarify and refuse items judged by kind.
// `--held-out` asks bench/analytics/held-out.ts instead: questions the parser's rules were never tuned on.
// Accuracy per difficulty and p50/p95 of the time to an answer (parse, plan, SQL, result). Today is 2025-12-31.
const TODAY = new Date('2025-12-31T00:00:00Z');

export async function benchAnalyticsParser(options: { verbose: boolean; heldOut: boolean }) {
  const set = options.heldOut ? HELD_OUT : GOLDEN_SET;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-analytics-parser-'));
  fs.chmodSync(dir, 0o755);
  const { pg, databaseUrl } = await startBenchDatabase(dir);
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dir, LOG_LEVEL: 'silent', ANALYTICS_DATABASE_URL: '' });
  const sql = createSql(databaseUrl, 5);
  const deps = { sql, config };
  const embedder = createEmbedder(config);
  try {
    await setDerivedReaderPassword(sql, config);
    const orgId = newId();
    await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, 'bench-analytics')`;
    await seedGoldenCrm(sql, orgId);
    const table = await declareTable(deps, orgId, 'bench', 'orders', ORDERS_DECLARATION);
    await writeRows(deps, orgId, 'orders', goldenOrders(), 'replace');
    const view = String((table as { view: string }).view);

    const results: { id: string; difficulty: string; phrasing: number; ok: boolean; ms: number; said: string }[] = [];
    for (const item of set) {
      const kind = item.kind ?? 'answer';
      let gold: unknown[][] | null = null;
      if (kind === 'answer') {
        const outcome = await attemptQuery(deps, orgId, item.gold.replaceAll(ORDERS, view));
        if (!outcome.ok) throw new Error(`gold ${item.id} fails: ${outcome.error.detail}`);
        gold = outcome.result.rows;
      }
      for (const [n, question] of [item.question, ...item.phrasings].entries()) {
        const started = performance.now();
        const understood = await understandQuestion(deps, orgId, question, { today: TODAY, embedder });
        let ok = false;
        let said = '';
        if (understood.kind === 'plan') {
          said = understood.compiled.sql.replace(/\s+/g, ' ');
          const outcome = await attemptQuery(deps, orgId, understood.compiled.sql);
          ok = kind === 'answer' && outcome.ok && sameResult(outcome.result.rows, gold!);
          if (!outcome.ok) said += ` → ${outcome.error.detail}`;
        } else {
          said = `${understood.kind}: ${understood.text.slice(0, 120)}`;
          ok = understood.kind === kind;
        }
        const ms = performance.now() - started;
        results.push({ id: item.id, difficulty: item.difficulty, phrasing: n, ok, ms, said });
        if (options.verbose && !ok) process.stderr.write(`${item.id}.${n} WRONG ${JSON.stringify(question)}\n    ${said}\n`);
      }
    }
    const by = (filter: (r: (typeof results)[number]) => boolean) => {
      const rows = results.filter(filter);
      return { asked: rows.length, correct_pct: Math.round((1000 * rows.filter((r) => r.ok).length) / Math.max(1, rows.length)) / 10 };
    };
    const times = results.map((r) => r.ms).sort((a, b) => a - b);
    const pct = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]! * 10) / 10;
    return {
      embedder: embedder.model,
      set: options.heldOut ? 'held-out' : 'golden',
      questions: set.length,
      phrasings_asked: results.length,
      all: by(() => true),
      easy: by((r) => r.difficulty === 'easy'),
      medium: by((r) => r.difficulty === 'medium'),
      hard: by((r) => r.difficulty === 'hard'),
      first_phrasing: by((r) => r.phrasing === 0),
      other_phrasings: by((r) => r.phrasing > 0),
      ms_p50: pct(0.5),
      ms_p95: pct(0.95),
    };
  } finally {
    await closeReaderPools();
    await sql.end({ timeout: 5 });
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
