import { RUN_SQL_TOOL, toolOutput } from '../../domain/analytics-assistant';
import type { ChatMessage, ChatModel } from '../../platform/adapters/llm/chat-model';
import { createChatModel } from '../../platform/adapters/llm/chat-model-factory';
import { systemPrompt } from '../../services/analytics-assistant/prompt';
import { attemptQuery } from '../../services/assistants/query-runner';
import { readableSchema } from '../../services/assistants/schema';
import { GOLDEN_SET, ORDERS, sameResult } from './golden-set';
import { withSeededOrg } from './seeded-org';

// `npm run bench -- analytics-accuracy [--check]`: execution accuracy of the Analytics Assistant's model on
// the golden set (bench/analytics/golden-set.ts), per difficulty: right at the first statement, and within
// the assistant's 3 attempts (refusals and errors fed back). The model is the OpenAI-compatible one with
// LLM_BASE_URL, else the local model. `--check` runs only the gold statements (through the guard and role).
const CALL_TIMEOUT_MS = Number(process.env.ANALYTICS_BENCH_CALL_TIMEOUT_MS ?? 180_000);

export async function benchAnalyticsAccuracy(options: { check: boolean; limit?: number }) {
  return withSeededOrg('analytics', async ({ deps, orgId, ordersView: view }) => {
    // Only answerable items have a gold to run and compare (clarify and refuse items have none).
    const answerable = GOLDEN_SET.filter((q) => (q.kind ?? 'answer') === 'answer');
    const questions = answerable.slice(0, options.limit ?? answerable.length).map((q) => ({ ...q, gold: q.gold.replaceAll(ORDERS, view) }));

    const gold = new Map<string, unknown[][]>();
    for (const q of questions) {
      const outcome = await attemptQuery(deps, orgId, q.gold);
      if (!outcome.ok) throw new Error(`gold ${q.id} fails: ${outcome.error.detail}`);
      if (outcome.result.rows.length === 0) throw new Error(`gold ${q.id} returns no rows`);
      gold.set(q.id, outcome.result.rows);
    }
    if (options.check) return { questions: questions.length, gold: 'all run, all non-empty' };

    const model = createChatModel(deps.config);
    const system = systemPrompt(await readableSchema(deps, orgId), '2025-12-31');
    const started = Date.now();
    const results: { id: string; difficulty: string; first: boolean; within3: boolean; attempts: number; sql: string[] }[] = [];
    for (const q of questions) {
      const messages: ChatMessage[] = [
        { role: 'system', content: system },
        { role: 'user', content: q.question },
      ];
      const tried: string[] = [];
      let first = false;
      let within3 = false;
      for (let attempt = 1; attempt <= 3; attempt++) {
        const step = await callModel(model, messages);
        const statement = step.sql;
        if (!statement) break;
        tried.push(statement);
        const outcome = await attemptQuery(deps, orgId, statement);
        const right = outcome.ok && sameResult(outcome.result.rows, gold.get(q.id)!);
        if (right) {
          within3 = true;
          first = attempt === 1;
          break;
        }
        // Only a refusal or an error goes back for another attempt, as in the assistant; a wrong result ends it.
        if (outcome.ok) break;
        const id = `call-${attempt}`;
        messages.push({ role: 'assistant', content: step.text, toolCalls: [{ id, name: RUN_SQL_TOOL.name, input: { sql: statement } }] });
        messages.push({ role: 'tool', toolCallId: id, content: toolOutput({ ok: false, error: outcome.error.detail }) });
      }
      results.push({ id: q.id, difficulty: q.difficulty, first, within3, attempts: tried.length, sql: tried });
      process.stderr.write(`${q.id} ${first ? 'first' : within3 ? 'retry' : 'wrong'} ${JSON.stringify(tried[tried.length - 1] ?? null)}\n`);
    }
    const by = (d?: string) => {
      const rows = results.filter((r) => !d || r.difficulty === d);
      const pct = (n: number) => Math.round((1000 * n) / Math.max(1, rows.length)) / 10;
      return {
        questions: rows.length,
        first_attempt_pct: pct(rows.filter((r) => r.first).length),
        within_3_attempts_pct: pct(rows.filter((r) => r.within3).length),
      };
    };
    return {
      model: model.name,
      seconds: Math.round((Date.now() - started) / 1000),
      all: by(),
      easy: by('easy'),
      medium: by('medium'),
      hard: by('hard'),
      no_statement: results.filter((r) => r.attempts === 0).length,
      results,
    };
  });
}

/** One model call: the run_sql statement it made, or a SELECT found in its text (small models often answer in text). */
async function callModel(model: ChatModel, messages: ChatMessage[]): Promise<{ sql: string | null; text: string }> {
  let text = '';
  let sql: string | null = null;
  try {
    const tools = [{ ...RUN_SQL_TOOL, parameters: RUN_SQL_TOOL.parameters as unknown as Record<string, unknown> }];
    for await (const event of model.stream({
      messages,
      tools,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      maxTokens: 300,
      temperature: 0,
    })) {
      if (event.type === 'text-delta') text += event.delta;
      else if (event.type === 'tool-call' && sql === null) {
        const input = event.call.input as { sql?: unknown } | null;
        if (typeof input?.sql === 'string') sql = input.sql;
      }
    }
  } catch (error) {
    process.stderr.write(`model call failed: ${(error as Error).message}\n`);
  }
  if (!sql) sql = /\bSELECT\b[\s\S]*?(?=```|;|$)/i.exec(text.replace(/```sql/gi, '```'))?.[0]?.trim() ?? null;
  return { sql, text };
}
